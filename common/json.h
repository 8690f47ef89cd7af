// Protobuf messages as the JSON that run.json, the journal and the history
// store: protobuf's own JSON form (json_util) with the .proto field names.
#ifndef LOCKSTEP_COMMON_JSON_H_
#define LOCKSTEP_COMMON_JSON_H_

#include <string>

#include <google/protobuf/message.h>

namespace lockstep {

// Every field, defaults included, under its .proto name; `pretty` indents.
// "{}" if protobuf cannot print it (it can for every message of ours).
std::string ToJson(const google::protobuf::Message& message, bool pretty);

// Set fields only (proto3 defaults left out: a reader parsing it with
// protobuf gets them back), on one line. For the agents' records in run.json
// and the journal: printing every default makes protobuf's writer build a
// node per field, a cost that grows with every agent and phase (measured:
// tests/bench/README.md, section 12).
std::string ToJsonSetFieldsOnly(const google::protobuf::Message& message);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_JSON_H_
