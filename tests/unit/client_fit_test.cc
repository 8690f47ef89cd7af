// controller/run/client_fit.h: what the kinds size to the clients and refuse
// of them before the first phase, asked through PhaseKindDef (the AI kinds'
// dataset: dataset_memory_multiple against the client hosts' memory, the
// dataset against the free space of the root its dir is on).
#include "controller/run/client_fit.h"

#include <memory>

#include <grpcpp/grpcpp.h>

#include "controller/plan/compile.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lockstep {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr uint64_t kGiB = uint64_t{1} << 30;

// A client on `host` with `memory` bytes and one root /data of `fs_type`
// with `free` bytes free; `shared` declares the root shared (wire minor 10).
std::unique_ptr<AgentClient> Client(const std::string& address, const std::string& host,
                                    uint64_t memory, uint64_t free, bool shared) {
  auto c = std::make_unique<AgentClient>(address, v1::CLIENT, grpc::InsecureChannelCredentials());
  c->facts.set_hostname(host);
  c->facts.set_memory_bytes(memory);
  v1::RootFacts* r = c->facts.add_roots();
  r->set_path("/data");
  r->set_fs_type(shared ? "fuse" : "ext4");
  r->set_free_bytes(free);
  r->mutable_capabilities()->set_shared(shared);
  return c;
}

// A 1 MiB-per-file dataset of 16 files in /data/ds, generated with a
// memory multiple of `multiple`, and the train phase that reads it.
Plan DatasetPlan(double multiple) {
  const std::string dataset =
      "dir = \"/data/ds\"\nformat = \"npz\"\nnum_files = 16\nsamples_per_file = 1\n"
      "record_size = \"1m\"\n";
  auto plan = ParsePlan(
      "[[phase]]\nname = \"gen\"\nkind = \"datagen\"\n" + dataset +
          (multiple > 0 ? "dataset_memory_multiple = " + std::to_string(multiple) + "\n" : "") +
          "[[phase]]\nname = \"train\"\nkind = \"train\"\n" + dataset + "batch_size = 1\n" +
          "[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \"/data/w\"\n",
      "ai.toml");
  EXPECT_TRUE(plan.ok()) << plan.status();
  return *plan;
}

TEST(ClientFit, MemoryMultipleSizesTheDatasetForDatagenAndTrain) {
  // Two agents on n1 (its memory counted once) and one on n2: 8 GiB in all.
  auto a = Client("a:1", "n1", 4 * kGiB, 1000 * kGiB, false);
  auto b = Client("b:1", "n1", 4 * kGiB, 1000 * kGiB, false);
  auto c = Client("c:1", "n2", 4 * kGiB, 1000 * kGiB, false);
  const Plan plan = DatasetPlan(2);
  const ResolvedPlan resolved = ResolvePlan(plan);
  ClientFit fit;
  ASSERT_FALSE(FitPhasesToClients(plan, resolved, {a.get(), b.get(), c.get()}, false, &fit));
  ASSERT_EQ(fit.counts.size(), 1u);
  // 2 x 8 GiB of files of 1 MiB (plus the format's own bytes): at least
  // 16,384 files, a little fewer than that many more.
  const uint64_t files = fit.counts.begin()->second;
  EXPECT_GE(files, 16000u);
  EXPECT_LE(files, 16384u);
  ASSERT_EQ(fit.notes.size(), 1u);
  EXPECT_THAT(fit.notes[0], AllOf(HasSubstr("phase gen: num_files 16 -> "),
                                  HasSubstr("dataset_memory_multiple 2 x 8 GiB"),
                                  HasSubstr("on 2 client hosts")));
  // The compiled specs: datagen and the train phase of the same dataset
  // get the files chosen; the write is untouched.
  auto compiled = CompileTest(plan, resolved, 0, 3, false, &fit);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ASSERT_EQ(compiled->phases.size(), 3u);
  EXPECT_EQ(compiled->phases[0].spec.num_files(), files);
  EXPECT_EQ(compiled->phases[1].spec.num_files(), files);
  auto unfitted = CompileTest(plan, resolved, 0, 3, false);
  ASSERT_TRUE(unfitted.ok()) << unfitted.status();
  EXPECT_EQ(unfitted->phases[1].spec.num_files(), 16u);
  EXPECT_EQ(compiled->phases[2].spec.SerializeAsString(),
            unfitted->phases[2].spec.SerializeAsString());
  // No multiple: nothing chosen.
  ClientFit none;
  const Plan without = DatasetPlan(0);
  ASSERT_FALSE(FitPhasesToClients(without, ResolvePlan(without), {a.get()}, false, &none));
  EXPECT_TRUE(none.counts.empty());
}

TEST(ClientFit, ADatasetLargerThanTheFreeSpaceIsRefusedUnlessForced) {
  // 16 GiB of dataset against 4 GiB free on each local root: each of two
  // hosts holds half of it, 8 GiB, and is refused, naming agent and fix.
  auto a = Client("a:1", "n1", 4 * kGiB, 4 * kGiB, false);
  auto b = Client("b:1", "n2", 4 * kGiB, 4 * kGiB, false);
  const Plan plan = DatasetPlan(2);
  const ResolvedPlan resolved = ResolvePlan(plan);
  ClientFit fit;
  RunError e = FitPhasesToClients(plan, resolved, {a.get(), b.get()}, false, &fit);
  ASSERT_TRUE(e);
  EXPECT_EQ(e.kind, RunFailure::kBadPlan);
  EXPECT_THAT(e.message, AllOf(HasSubstr("[[phase]] 'gen' key 'num_files'"),
                               HasSubstr("on agent a:1 (n1), where 4 GiB is free"),
                               HasSubstr("on agent b:1 (n2)"), HasSubstr("--force")));
  ClientFit forced;
  EXPECT_FALSE(FitPhasesToClients(plan, resolved, {a.get(), b.get()}, true, &forced));
  EXPECT_EQ(forced.counts, fit.counts);  // the size is chosen all the same
  // With 10 GiB free each, a local root holds its half; a shared one (as
  // its agent declares) must hold the whole dataset.
  auto c = Client("c:1", "n1", 4 * kGiB, 10 * kGiB, false);
  auto d = Client("d:1", "n2", 4 * kGiB, 10 * kGiB, false);
  EXPECT_FALSE(FitPhasesToClients(plan, resolved, {c.get(), d.get()}, false, &fit));
  auto s1 = Client("s:1", "n1", 4 * kGiB, 10 * kGiB, true);
  auto s2 = Client("s:2", "n2", 4 * kGiB, 10 * kGiB, true);
  e = FitPhasesToClients(plan, resolved, {s1.get(), s2.get()}, false, &fit);
  ASSERT_TRUE(e);
  EXPECT_THAT(e.message, HasSubstr("(fuse) on agent s:1 (n1)"));
}

}  // namespace
}  // namespace lockstep
