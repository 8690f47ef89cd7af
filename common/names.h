// Names of wire enums as users write them in plans and read them in output.
#ifndef LOCKSTEP_COMMON_NAMES_H_
#define LOCKSTEP_COMMON_NAMES_H_

#include <optional>
#include <string_view>

#include "lockstep/v1/agent.pb.h"

namespace lockstep {

const char* RoleName(v1::Role role);            // "client", "oss", "mds"
std::optional<v1::Role> ParseRole(std::string_view name);
// "write", "read", "rewrite", "small_files", "mdtest", ...: the wire name in lower case
const char* PhaseKindName(v1::PhaseKind kind);
std::optional<v1::PhaseKind> ParsePhaseKind(std::string_view name);
// "tree_create", "dir_create", "dir_stat", "dir_rename", ... "file_remove",
// "tree_remove".
const char* MdtestOpName(v1::MdtestOp op);
std::optional<v1::MdtestOp> ParseMdtestOp(std::string_view name);
// mdtest's row titles: "Directory creation", "File stat", "Tree removal".
const char* MdtestOpTitle(v1::MdtestOp op);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_NAMES_H_
