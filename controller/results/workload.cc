#include "controller/results/workload.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/files.h"
#include "common/sizes.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace lockstep {

const std::vector<std::string> kWorkloadSiteTunables = {
    // local: where and under which names, which agent does which ranks
    "phase_id", "phase_name", "test_id", "repetition", "dir", "file_name", "tasks",
    "first_rank", "file_prefix",
    // drawn at run time
    "stonewall_count", "find_newer_unix_ns", "shuffle_seed",
    // site tunables: the file system's layout and checksums, free-space
    // override, untimed delay, the commands of a site's own programs
    "stripe_count", "stripe_size_bytes", "stripe_index", "stripe_pool", "set_stripe",
    "object_size_bytes", "checksums", "ignore_free_space", "delay_seconds", "command_argv",
    "command_env", "command_timeout_ms", "command_tail_bytes",
    // recorded only (what chose a value that is itself covered)
    "dataset_memory_multiple", "model", "au_threshold"};

const char kWorkloadHashCovers[] =
    "the workload hash covers phase kinds, sizes, counts, patterns and seeds, access order, "
    "fsync/O_DIRECT/verify, stonewalls, cache barriers, sweep points, tasks per agent and "
    "client count; it leaves out directories, file and phase names, hosts and addresses, "
    "repetition counts and site tunables (file-system layout, checksums, delays, commands)";

namespace {

using google::protobuf::FieldDescriptor;

// Plan keys of the tunables above, as a sweep names them.
bool IsTunableSweepKey(const std::string& key) {
  static const std::set<std::string> keys = {"stripe_count", "stripe_size", "stripe_index",
                                             "stripe_pool",  "object_size", "checksums",
                                             "dir",          "delay",       "file_name"};
  return keys.count(key) != 0;
}

// "name=value" of one set field of `spec`.
std::string FieldText(const v1::PhaseSpec& spec, const FieldDescriptor* f) {
  const auto* r = spec.GetReflection();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: return absl::StrCat(r->GetInt32(spec, f));
    case FieldDescriptor::CPPTYPE_INT64: return absl::StrCat(r->GetInt64(spec, f));
    case FieldDescriptor::CPPTYPE_UINT32: return absl::StrCat(r->GetUInt32(spec, f));
    case FieldDescriptor::CPPTYPE_UINT64: return absl::StrCat(r->GetUInt64(spec, f));
    case FieldDescriptor::CPPTYPE_DOUBLE: return absl::StrFormat("%.17g", r->GetDouble(spec, f));
    case FieldDescriptor::CPPTYPE_FLOAT: return absl::StrFormat("%.9g", r->GetFloat(spec, f));
    case FieldDescriptor::CPPTYPE_BOOL: return r->GetBool(spec, f) ? "true" : "false";
    case FieldDescriptor::CPPTYPE_ENUM: return std::string(r->GetEnum(spec, f)->name());
    case FieldDescriptor::CPPTYPE_STRING: return absl::StrCat("\"", r->GetString(spec, f), "\"");
    case FieldDescriptor::CPPTYPE_MESSAGE: return "{...}";
  }
  return "?";
}

// The spec's I/O-shaping fields, in field-number order, defaults left out.
std::string SpecText(const v1::PhaseSpec& spec) {
  static const std::set<std::string> local(kWorkloadSiteTunables.begin(),
                                           kWorkloadSiteTunables.end());
  const auto* d = spec.GetDescriptor();
  std::vector<const FieldDescriptor*> fields;
  for (int i = 0; i < d->field_count(); ++i) fields.push_back(d->field(i));
  std::sort(fields.begin(), fields.end(),
            [](const auto* a, const auto* b) { return a->number() < b->number(); });
  std::vector<std::string> parts;
  const auto* r = spec.GetReflection();
  for (const FieldDescriptor* f : fields) {
    if (local.count(std::string(f->name())) != 0) continue;
    if (f->is_repeated()) {
      if (r->FieldSize(spec, f) > 0) parts.push_back(absl::StrCat(f->name(), "=[...]"));
      continue;
    }
    if (!r->HasField(spec, f)) continue;  // proto3: default value
    parts.push_back(absl::StrCat(f->name(), "=", FieldText(spec, f)));
  }
  return absl::StrJoin(parts, " ");
}

// The specs of a test, as planned: plan_specs, else (older records) the
// first repetition's phase specs.
std::vector<v1::PhaseSpec> SpecsOf(const v1::TestRecord& test) {
  if (test.plan_specs_size() > 0) return {test.plan_specs().begin(), test.plan_specs().end()};
  std::vector<v1::PhaseSpec> out;
  uint32_t first_rep = UINT32_MAX;
  for (const auto& p : test.phases()) first_rep = std::min(first_rep, p.repetition());
  for (const auto& p : test.phases()) {
    if (p.repetition() == first_rep) {
      out.push_back(p.spec());
      if (out.back().kind() == v1::PHASE_KIND_UNSPECIFIED) out.back().set_kind(p.kind());
    }
  }
  return out;
}

// phase name -> its cache barrier, from the test's phase records.
std::map<std::string, std::string> CacheOf(const v1::TestRecord& test) {
  std::map<std::string, std::string> out;
  for (const auto& p : test.phases()) out.emplace(p.phase(), p.cache());
  return out;
}

std::string KindName(v1::PhaseKind k) {
  std::string n = v1::PhaseKind_Name(k);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  return n;
}

// The readable class: kinds in order, clients × tasks, the first transfer
// phase's sizes, cache barriers, test count.
std::string ClassOf(const v1::RunRecord& run) {
  if (run.tests().empty()) return "no tests";
  const v1::TestRecord& t0 = run.tests(0);
  std::vector<std::string> kinds;
  std::set<std::string> caches;
  const v1::PhaseSpec* sized = nullptr;
  std::vector<v1::PhaseSpec> specs = SpecsOf(t0);
  const auto cache = CacheOf(t0);
  for (const auto& s : specs) {
    std::string k = KindName(s.kind());
    if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(k);
    if (sized == nullptr && s.transfer_bytes() > 0) sized = &s;
    auto c = cache.find(s.phase_name());
    if (c != cache.end() && !c->second.empty()) caches.insert(c->second);
  }
  std::vector<std::string> parts = {absl::StrJoin(kinds, "+")};
  std::set<uint32_t> clients, tpa;
  for (const auto& t : run.tests()) {
    clients.insert(t.client_agents());
    tpa.insert(t.tasks_per_agent());
  }
  parts.push_back(absl::StrFormat("%s clients x %s tasks", absl::StrJoin(clients, "/"),
                                  absl::StrJoin(tpa, "/")));
  if (sized != nullptr) {
    parts.push_back(absl::StrCat("xfer ", HumanBytes(sized->transfer_bytes())));
    if (sized->block_bytes() > 0) parts.push_back(absl::StrCat("block ", HumanBytes(sized->block_bytes())));
    parts.push_back(sized->file_per_process() ? "fpp" : "shared file");
  }
  if (!caches.empty()) parts.push_back(absl::StrCat("cache ", absl::StrJoin(caches, "/")));
  parts.push_back(absl::StrFormat("%d test%s", run.tests_size(), run.tests_size() == 1 ? "" : "s"));
  std::string out = absl::StrJoin(parts, ", ");
  if (out.size() > 200) out = out.substr(0, 197) + "...";
  return out;
}

}  // namespace

WorkloadIdentity WorkloadOf(const v1::RunRecord& run) {
  WorkloadIdentity w;
  w.lines.push_back("lockstep workload 1");
  int test_no = 0;
  for (const auto& test : run.tests()) {
    ++test_no;
    w.lines.push_back(absl::StrFormat("test %d: client_agents=%u tasks_per_agent=%u total_tasks=%u",
                                      test_no, test.client_agents(), test.tasks_per_agent(),
                                      test.total_tasks()));
    for (const auto& s : test.sweep()) {
      if (IsTunableSweepKey(s.key())) continue;
      w.lines.push_back(absl::StrFormat("test %d sweep: %s%s%s=%s", test_no, s.phase(),
                                        s.phase().empty() ? "" : ".", s.key(), s.value()));
    }
    const auto cache = CacheOf(test);
    int phase_no = 0;
    for (const v1::PhaseSpec& spec : SpecsOf(test)) {
      ++phase_no;
      auto c = cache.find(spec.phase_name());
      const std::string barrier = c == cache.end() || c->second.empty() ? "none" : c->second;
      w.lines.push_back(absl::StrFormat("test %d phase %d: cache=%s %s", test_no, phase_no,
                                        barrier, SpecText(spec)));
    }
  }
  w.hash = Sha256Hex(absl::StrJoin(w.lines, "\n"));
  w.workload_class = ClassOf(run);
  return w;
}

std::string WorkloadDifference(const WorkloadIdentity& a, const WorkloadIdentity& b,
                               int max_lines) {
  if (a.hash == b.hash) return "";
  std::vector<std::string> out;
  const size_t n = std::max(a.lines.size(), b.lines.size());
  for (size_t i = 0; i < n && static_cast<int>(out.size()) < 2 * max_lines; ++i) {
    const std::string la = i < a.lines.size() ? a.lines[i] : "(none)";
    const std::string lb = i < b.lines.size() ? b.lines[i] : "(none)";
    if (la == lb) continue;
    out.push_back("A: " + la);
    out.push_back("B: " + lb);
  }
  if (out.empty()) out.push_back("(the canonical lines were not kept)");
  return absl::StrJoin(out, "\n");
}

}  // namespace lockstep
