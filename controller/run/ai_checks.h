// The AI phases' checks and choices that need the client agents' facts
// (HostFacts at Attach), made by the controller before the first phase:
//   - dataset_memory_multiple: a datagen phase's num_files raised so that the
//     dataset is at least that many times the client hosts' memory (each
//     host counted once), so reads cannot come from the page cache; the
//     train phases of the same dataset (dir, file_prefix, format) read the
//     same files. The run says what it chose.
//   - free space: a datagen phase whose dataset does not fit the free space
//     of the root its dir is on (per host on a local file system, the whole
//     dataset on a shared one) is refused before any data is written, naming
//     the plan's file, line, key, value, agent and the fix (--force skips).
// Pure functions of the plan and the facts; the coordinator's thread.
#ifndef LOCKSTEP_CONTROLLER_RUN_AI_CHECKS_H_
#define LOCKSTEP_CONTROLLER_RUN_AI_CHECKS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "controller/plan/plan.h"
#include "controller/run/agent_client.h"
#include "controller/run/run_error.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

struct DatasetChoices {
  std::map<std::string, uint64_t> num_files;  // by DatasetKeyOf
  std::vector<std::string> notes;             // one line per choice
};

// "dir|prefix|format" of a datagen or train phase (or spec).
std::string DatasetKeyOf(const std::string& dir, const std::string& prefix, v1::DatasetFormat f);

// The files each dataset with a dataset_memory_multiple gets, from the
// clients' memory (HostFacts.memory_bytes, one per hostname).
DatasetChoices ChooseDatasets(const Plan& plan, const std::vector<AgentClient*>& clients);

// `spec` with the chosen num_files when it is a datagen or train spec.
v1::PhaseSpec WithDatasetChoices(const DatasetChoices& choices, v1::PhaseSpec spec);

// kBadPlan naming file:line, phase, key, value, agent and fix when a
// datagen's dataset does not fit; empty otherwise or with `force`.
RunError CheckDatasetSpace(const Plan& plan, const DatasetChoices& choices,
                           const std::vector<AgentClient*>& clients, bool force);

// ChooseDatasets into *choices, then CheckDatasetSpace.
RunError ChooseAndCheckDatasets(const Plan& plan, const std::vector<AgentClient*>& clients,
                                bool force, DatasetChoices* choices);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_AI_CHECKS_H_
