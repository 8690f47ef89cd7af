#include "common/names.h"

namespace lockstep {

const char* RoleName(v1::Role role) {
  switch (role) {
    case v1::CLIENT: return "client";
    case v1::OSS: return "oss";
    case v1::MDS: return "mds";
    default: return "unspecified";
  }
}

std::optional<v1::Role> ParseRole(std::string_view name) {
  if (name == "client") return v1::CLIENT;
  if (name == "oss") return v1::OSS;
  if (name == "mds") return v1::MDS;
  return std::nullopt;
}

const char* PhaseKindName(v1::PhaseKind kind) {
  switch (kind) {
    case v1::WRITE: return "write";
    case v1::READ: return "read";
    default: return "unspecified";
  }
}

std::optional<v1::PhaseKind> ParsePhaseKind(std::string_view name) {
  if (name == "write") return v1::WRITE;
  if (name == "read") return v1::READ;
  return std::nullopt;
}

}  // namespace lockstep
