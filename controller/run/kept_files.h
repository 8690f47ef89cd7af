// The files of a failed verification are the evidence: the run keeps them
// (as IOR keeps the file a failed read aborted on, and IOR -K the files of
// a data mismatch) and says where they are. The coordinator decides from
// the phase's typed failure (RunFailure::kVerify, from the tasks'
// VERIFY_FAILED), never from message text.
#ifndef LOCKSTEP_CONTROLLER_RUN_KEPT_FILES_H_
#define LOCKSTEP_CONTROLLER_RUN_KEPT_FILES_H_

#include <string>
#include <vector>

#include <google/protobuf/repeated_field.h>

#include "lockstep/v1/agent.pb.h"

namespace lockstep {

// Moves out of `written` (the repetition's phases whose files it removes)
// every phase naming the files of `failed` (its dir and file_name: the
// write that made them and the read that found them wrong) and returns
// them, in order.
std::vector<v1::PhaseSpec> TakeFilesOf(const v1::PhaseSpec& failed,
                                       std::vector<v1::PhaseSpec>* written);

// "kept for inspection (the verification failed; remove them when done):
// host:/path, ..." (at most 16 named, then how many more).
std::string KeptFilesNote(const google::protobuf::RepeatedPtrField<std::string>& host_paths);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_KEPT_FILES_H_
