#include "controller/run/ai_checks.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/dataset.h"
#include "common/files.h"
#include "common/sizes.h"
#include "controller/plan/sweep.h"
#include "controller/plan/kinds/ai_plan.h"
#include "controller/run/fs_checks.h"

namespace lockstep {
namespace {

// The spec fields common/dataset.h sizes a dataset from.
v1::PhaseSpec DatasetSpecOf(const PhasePlan& p, uint64_t num_files) {
  v1::PhaseSpec s;
  s.set_dataset_format(p.Own<AiPhasePlan>().format);
  s.set_num_files(num_files);
  s.set_samples_per_file(p.Own<AiPhasePlan>().samples_per_file);
  s.set_record_bytes(p.Own<AiPhasePlan>().record_bytes);
  s.set_file_prefix(p.Own<AiPhasePlan>().file_prefix);
  return s;
}

}  // namespace

std::string DatasetKeyOf(const std::string& dir, const std::string& prefix, v1::DatasetFormat f) {
  return absl::StrFormat("%s|%s|%d", dir, prefix, static_cast<int>(f));
}

DatasetChoices ChooseDatasets(const Plan& plan, const std::vector<AgentClient*>& clients) {
  DatasetChoices out;
  std::map<std::string, uint64_t> memory_by_host;
  for (const AgentClient* c : clients) memory_by_host[c->facts.hostname()] = c->facts.memory_bytes();
  uint64_t memory = 0;
  for (const auto& [host, bytes] : memory_by_host) memory += bytes;
  for (const PhasePlan& p : plan.phases) {
    if (p.kind != v1::DATAGEN || p.Own<AiPhasePlan>().dataset_memory_multiple <= 0 || memory == 0)
      continue;
    const uint64_t file_bytes =
        DatasetFileLayoutOf(DatasetSpecOf(p, p.Own<AiPhasePlan>().num_files), 0).file_bytes;
    const double want = p.Own<AiPhasePlan>().dataset_memory_multiple * static_cast<double>(memory);
    const uint64_t files = static_cast<uint64_t>(std::ceil(want / std::max<uint64_t>(file_bytes, 1)));
    if (files <= p.Own<AiPhasePlan>().num_files) continue;
    out.num_files[DatasetKeyOf(p.dir, p.Own<AiPhasePlan>().file_prefix,
                               p.Own<AiPhasePlan>().format)] = files;
    out.notes.push_back(absl::StrFormat(
        "phase %s: num_files %u -> %u (dataset_memory_multiple %g x %s of memory on %u client "
        "hosts: %s of files of %s)",
        p.name, p.Own<AiPhasePlan>().num_files, files, p.Own<AiPhasePlan>().dataset_memory_multiple,
        HumanBytes(memory), memory_by_host.size(), HumanBytes(files * file_bytes),
        HumanBytes(file_bytes)));
  }
  return out;
}

v1::PhaseSpec WithDatasetChoices(const DatasetChoices& choices, v1::PhaseSpec s) {
  if (s.kind() != v1::DATAGEN && s.kind() != v1::TRAIN) return s;
  auto it = choices.num_files.find(DatasetKeyOf(s.dir(), s.file_prefix(), s.dataset_format()));
  if (it != choices.num_files.end()) s.set_num_files(it->second);
  return s;
}

RunError ChooseAndCheckDatasets(const Plan& plan, const std::vector<AgentClient*>& clients,
                                bool force, DatasetChoices* choices) {
  *choices = ChooseDatasets(plan, clients);
  return CheckDatasetSpace(plan, *choices, clients, force);
}

RunError CheckDatasetSpace(const Plan& plan, const DatasetChoices& choices,
                           const std::vector<AgentClient*>& clients, bool force) {
  if (force || clients.empty()) return {};
  std::vector<std::string> refused;
  for (const PhasePlan& declared : plan.phases) {
    if (declared.kind != v1::DATAGEN) continue;
    for (uint32_t t = 0; t < plan.tests(); ++t) {
      const PhasePlan p = ResolvePhase(plan, declared, t);
      uint64_t files = p.Own<AiPhasePlan>().num_files;
      auto chosen = choices.num_files.find(
          DatasetKeyOf(p.dir, p.Own<AiPhasePlan>().file_prefix, p.Own<AiPhasePlan>().format));
      if (chosen != choices.num_files.end()) files = chosen->second;
      const uint64_t dataset = DatasetBytes(DatasetSpecOf(p, files));
      // Local file systems: each host holds the share of its agents' tasks.
      std::map<std::string, uint32_t> agents_by_host;
      for (const AgentClient* c : clients) ++agents_by_host[c->facts.hostname()];
      std::set<std::string> said;
      for (const AgentClient* c : clients) {
        const v1::RootFacts* root = RootOf(p.dir, c->facts);
        if (root == nullptr || !said.insert(c->facts.hostname() + "|" + root->path()).second) continue;
        const uint64_t need =
            CapabilitiesOf(*root).shared()
                ? dataset
                : static_cast<uint64_t>(static_cast<double>(dataset) *
                                        agents_by_host[c->facts.hostname()] / clients.size());
        if (need <= root->free_bytes()) continue;
        refused.push_back(absl::StrFormat(
            "%s: [[phase]] '%s' key 'num_files': %u files of %u samples of %s make a dataset of "
            "%s, and %s needs %s of it in %s (%s) on agent %s (%s), where %s is free; lower "
            "num_files or record_size, free space, point dir at a larger file system, or run "
            "with --force",
            p.Own<AiPhasePlan>().dataset_pos, p.name, files, p.Own<AiPhasePlan>().samples_per_file,
            HumanBytes(p.Own<AiPhasePlan>().record_bytes), HumanBytes(dataset), c->facts.hostname(),
            HumanBytes(need), root->path(), root->fs_type(), c->address(), c->facts.hostname(),
            HumanBytes(root->free_bytes())));
      }
    }
  }
  if (refused.empty()) return {};
  return Fail(RunFailure::kBadPlan, absl::StrJoin(refused, "\n"));
}

}  // namespace lockstep
