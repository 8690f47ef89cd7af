#include "common/names.h"

#include <map>
#include <string>

#include "absl/strings/ascii.h"

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

namespace {
// A kind's name is its wire name in lower case (SMALL_FILES: "small_files"),
// so a new PhaseKind value needs no line here.
const std::map<int, std::string>& PhaseKindNames() {
  static const auto* names = [] {
    auto* m = new std::map<int, std::string>;
    const google::protobuf::EnumDescriptor* d = v1::PhaseKind_descriptor();
    for (int i = 0; i < d->value_count(); ++i) {
      const google::protobuf::EnumValueDescriptor* v = d->value(i);
      if (v->number() == v1::PHASE_KIND_UNSPECIFIED) continue;
      (*m)[v->number()] = absl::AsciiStrToLower(v->name());
    }
    return m;
  }();
  return *names;
}
}  // namespace

const char* PhaseKindName(v1::PhaseKind kind) {
  auto it = PhaseKindNames().find(kind);
  return it == PhaseKindNames().end() ? "unspecified" : it->second.c_str();
}

std::optional<v1::PhaseKind> ParsePhaseKind(std::string_view name) {
  for (const auto& [number, kind_name] : PhaseKindNames()) {
    if (kind_name == name) return static_cast<v1::PhaseKind>(number);
  }
  return std::nullopt;
}

namespace {
struct MdtestOpNames {
  v1::MdtestOp op;
  const char* name;
  const char* title;
};
constexpr MdtestOpNames kMdtestOps[] = {
    {v1::MD_TREE_CREATE, "tree_create", "Tree creation"},
    {v1::MD_DIR_CREATE, "dir_create", "Directory creation"},
    {v1::MD_DIR_STAT, "dir_stat", "Directory stat"},
    {v1::MD_DIR_RENAME, "dir_rename", "Directory rename"},
    {v1::MD_DIR_REMOVE, "dir_remove", "Directory removal"},
    {v1::MD_FILE_CREATE, "file_create", "File creation"},
    {v1::MD_FILE_STAT, "file_stat", "File stat"},
    {v1::MD_FILE_READ, "file_read", "File read"},
    {v1::MD_FILE_REMOVE, "file_remove", "File removal"},
    {v1::MD_TREE_REMOVE, "tree_remove", "Tree removal"},
};
}  // namespace

const char* MdtestOpName(v1::MdtestOp op) {
  for (const auto& e : kMdtestOps) {
    if (e.op == op) return e.name;
  }
  return "unspecified";
}

std::optional<v1::MdtestOp> ParseMdtestOp(std::string_view name) {
  for (const auto& e : kMdtestOps) {
    if (name == e.name) return e.op;
  }
  return std::nullopt;
}

const char* MdtestOpTitle(v1::MdtestOp op) {
  for (const auto& e : kMdtestOps) {
    if (e.op == op) return e.title;
  }
  return "unspecified";
}

}  // namespace lockstep
