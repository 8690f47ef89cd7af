// site.toml (controller/results/site_file.h) and the system description
// shown side by side, differences first (system_description.h).
#include "controller/results/site_file.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "controller/results/system_description.h"
#include "gtest/gtest.h"
#include "unit/results_fixtures.h"

namespace lockstep {
namespace {

using testing::Has;

constexpr char kGood[] = R"(site = "hlrs"
system = "testbed-a"
interconnect = "HDR InfiniBand"
interconnect_speed = "200Gb/s"
storage_media = "NVMe"
server_nodes = 4
client_nodes = 16
file_system = "Lustre 2.15.4"
notes = "nightly"
[extra]
rack = "B12"
racks = 2
)";

std::string Without(const std::string& key) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(kGood, '\n')) {
    if (!absl::StartsWith(line, key + " =")) absl::StrAppend(&out, line, "\n");
  }
  return out;
}

TEST(SiteFile, ReadsEveryKeyWithItsUnits) {
  auto s = ParseSiteToml(kGood, "site.toml");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->site(), "hlrs");
  EXPECT_EQ(s->system(), "testbed-a");
  EXPECT_EQ(s->interconnect_bits_per_s(), 200'000'000'000u);
  EXPECT_EQ(s->server_nodes(), 4u);
  EXPECT_EQ(s->client_nodes(), 16u);
  EXPECT_EQ(s->file_system(), "Lustre 2.15.4");
  EXPECT_EQ(s->extra().at("rack"), "B12");
  EXPECT_EQ(s->extra().at("racks"), "2");
  EXPECT_EQ(FormatBitRate(s->interconnect_bits_per_s()), "200Gb/s");
  EXPECT_EQ(FormatBitRate(25'000'000'000u), "25Gb/s");
}

TEST(SiteFile, AnUnknownKeyIsRefusedWithFileLineAndKey) {
  auto s = ParseSiteToml(std::string(kGood).insert(0, "sight = \"x\"\n"), "/etc/site.toml");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Has(std::string(s.status().message()), "/etc/site.toml:1:")) << s.status();
  EXPECT_TRUE(Has(std::string(s.status().message()), "unknown key 'sight'")) << s.status();
}

TEST(SiteFile, AWrongUnitIsRefusedNamingTheKeyAndTheUnits) {
  std::string text = kGood;
  text.replace(text.find("200Gb/s"), 7, "25GB/s");
  auto s = ParseSiteToml(text, "site.toml");
  ASSERT_FALSE(s.ok());
  const std::string m(s.status().message());
  EXPECT_TRUE(Has(m, "site.toml:4:")) << m;
  EXPECT_TRUE(Has(m, "key 'interconnect_speed'")) << m;
  EXPECT_TRUE(Has(m, "bytes per second, not bits")) << m;
  for (const char* bad : {"100", "100 furlongs", "fast"}) {
    EXPECT_FALSE(ParseBitRate(bad).ok()) << bad;
  }
  EXPECT_EQ(*ParseBitRate("1.5 Gb/s"), 1'500'000'000u);
  EXPECT_EQ(*ParseBitRate("100Mbit/s"), 100'000'000u);
}

TEST(SiteFile, AMissingRequiredKeyIsRefusedNamingItAndTheFix) {
  for (const char* key : {"site", "system", "interconnect", "interconnect_speed",
                          "storage_media", "server_nodes", "client_nodes"}) {
    auto s = ParseSiteToml(Without(key), "site.toml");
    ASSERT_FALSE(s.ok()) << key;
    EXPECT_TRUE(Has(std::string(s.status().message()), absl::StrCat("has no '", key, "'")))
        << s.status();
  }
  auto typed = ParseSiteToml(absl::StrCat(Without("client_nodes"), "client_nodes = \"16\"\n"),
                             "site.toml");
  ASSERT_FALSE(typed.ok());
  EXPECT_TRUE(Has(std::string(typed.status().message()), "key 'client_nodes'")) << typed.status();
}

TEST(SiteFile, MalformedTomlIsAnErrorNotAnException) {
  auto s = ParseSiteToml("site = \"unterminated\n", "bad.toml");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Has(std::string(s.status().message()), "bad.toml:1:")) << s.status();
}

v1::HostFacts Host(v1::Role role, const std::string& cpu, uint64_t nic_mbit) {
  v1::HostFacts f;
  f.set_role(role);
  f.set_cpu_model(cpu);
  f.set_cores(64);
  auto* n = f.add_nics();
  n->set_name("ib0");
  n->set_kind("infiniband");
  n->set_speed_mbit_per_s(nic_mbit);
  n->set_mtu(4092);
  auto* d = f.add_block_devices();
  d->set_name("nvme0n1");
  d->set_model("Samsung PM1733");
  d->set_size_bytes(3840ull * 1000 * 1000 * 1000);
  auto* r = f.add_roots();
  r->set_fs_name("lustre");
  r->set_fs_version("2.15.4");
  return f;
}

TEST(SystemDescription, DifferencesComeFirstAndSameRowsAfter) {
  v1::SystemDescription a, b;
  a.mutable_site()->set_site("hlrs");
  a.mutable_site()->set_interconnect_bits_per_s(200'000'000'000u);
  b.mutable_site()->set_site("lrz");
  b.mutable_site()->set_interconnect_bits_per_s(200'000'000'000u);
  *a.add_hosts() = Host(v1::CLIENT, "AMD EPYC 7763", 200000);
  *a.add_hosts() = Host(v1::CLIENT, "AMD EPYC 7763", 200000);
  *b.add_hosts() = Host(v1::CLIENT, "Intel Xeon 6338", 100000);
  *b.add_hosts() = Host(v1::CLIENT, "Intel Xeon 6338", 100000);
  const auto rows = SystemTable({a, b});
  ASSERT_FALSE(rows.empty());
  size_t first_same = rows.size();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].differs && first_same == rows.size()) first_same = i;
    if (i > first_same) {
      EXPECT_FALSE(rows[i].differs) << rows[i].what;
    }
  }
  auto find = [&](const std::string& what) -> const SystemRow* {
    for (const auto& r : rows) {
      if (r.what == what) return &r;
    }
    return nullptr;
  };
  ASSERT_NE(find("client cpu model"), nullptr);
  EXPECT_TRUE(find("client cpu model")->differs);
  EXPECT_EQ(find("client cpu model")->values[0], "2x AMD EPYC 7763");
  EXPECT_TRUE(find("client nics")->differs);
  EXPECT_EQ(find("client nics")->values[1], "2x infiniband 100Gb/s mtu 4092");
  ASSERT_NE(find("client file systems"), nullptr);
  EXPECT_FALSE(find("client file systems")->differs);
  EXPECT_EQ(find("client file systems")->values[0], "2x lustre 2.15.4");
  EXPECT_EQ(find("oss cpu model"), nullptr);  // empty on every side: left out
  const std::string text = FormatSystems({"hlrs", "lrz"}, {a, b});
  EXPECT_LT(text.find("differs:"), text.find("client cpu model")) << text;
  EXPECT_LT(text.find("client cpu model"), text.find("same:")) << text;
  EXPECT_LT(text.find("same:"), text.find("client file systems")) << text;
}

}  // namespace
}  // namespace lockstep
