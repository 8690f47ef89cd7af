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
    case v1::REWRITE: return "rewrite";
    case v1::SMALL_FILES: return "small_files";
    case v1::MDTEST: return "mdtest";
    case v1::FIND: return "find";
    case v1::COMMAND: return "command";
    case v1::SEEKS: return "seeks";
    case v1::TRAIN: return "train";
    case v1::DATAGEN: return "datagen";
    case v1::CHECKPOINT: return "checkpoint";
    default: return "unspecified";
  }
}

std::optional<v1::PhaseKind> ParsePhaseKind(std::string_view name) {
  if (name == "write") return v1::WRITE;
  if (name == "read") return v1::READ;
  if (name == "rewrite") return v1::REWRITE;
  if (name == "small_files") return v1::SMALL_FILES;
  if (name == "mdtest") return v1::MDTEST;
  if (name == "find") return v1::FIND;
  if (name == "command") return v1::COMMAND;
  if (name == "seeks") return v1::SEEKS;
  if (name == "train") return v1::TRAIN;
  if (name == "datagen") return v1::DATAGEN;
  if (name == "checkpoint") return v1::CHECKPOINT;
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
