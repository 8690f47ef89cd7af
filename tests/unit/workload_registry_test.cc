// The kind → workload table (agent/workloads/registry.cc): every kind the
// controller can send has a workload, and a kind without one is refused by
// name before anything touches the file system.
#include <string>

#include "agent/phase_runner.h"
#include "agent/workloads/workload.h"
#include "common/names.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

v1::PhaseSpec SpecOf(v1::PhaseKind kind) {
  v1::PhaseSpec s;
  s.set_phase_id("t0/r0/p");
  s.set_kind(kind);
  s.set_file_name("f");
  s.set_tasks(1);
  s.set_total_tasks(1);
  return s;
}

TEST(WorkloadRegistry, EveryKindOfTheProtoHasAWorkload) {
  const google::protobuf::EnumDescriptor* kinds = v1::PhaseKind_descriptor();
  for (int i = 0; i < kinds->value_count(); ++i) {
    const auto kind = static_cast<v1::PhaseKind>(kinds->value(i)->number());
    if (kind == v1::PHASE_KIND_UNSPECIFIED) continue;
    auto w = MakeWorkload(SpecOf(kind));
    EXPECT_TRUE(w.ok()) << kinds->value(i)->name() << ": " << w.status();
    // The controller names each kind it sends; the agent knows them all.
    EXPECT_TRUE(ParsePhaseKind(PhaseKindName(kind)).has_value()) << kinds->value(i)->name();
  }
  EXPECT_EQ(WorkloadKinds().size(), static_cast<size_t>(kinds->value_count() - 1));
}

TEST(WorkloadRegistry, AKindWithoutAWorkloadIsRefusedByName) {
  for (int kind : {0, 99}) {
    auto w = MakeWorkload(SpecOf(static_cast<v1::PhaseKind>(kind)));
    ASSERT_FALSE(w.ok());
    EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(w.status().message(), HasSubstr("phase t0/r0/p: kind"));
    EXPECT_THAT(w.status().message(), HasSubstr(std::to_string(kind)));
    EXPECT_THAT(w.status().message(),
                HasSubstr("one of write, read, rewrite, small_files, mdtest"));
  }
  testing::TempDir tmp;
  // The runner and the cleanup refuse it the same way, before any I/O.
  v1::PhaseSpec unknown = SpecOf(static_cast<v1::PhaseKind>(99));
  EXPECT_EQ(PhaseRunner::Prepare(unknown, tmp.path()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RemovePhaseFiles(unknown, tmp.path()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(WorkloadRegistry, WhatTheAgentAsksBeforePrepare) {
  v1::PhaseSpec write = SpecOf(v1::WRITE);
  write.set_tasks(2);
  write.set_total_tasks(2);
  write.set_block_bytes(1 << 20);
  write.set_segments(3);
  auto w = MakeWorkload(write);
  ASSERT_OK(w);
  EXPECT_TRUE((*w)->CreatesFiles());
  EXPECT_EQ((*w)->AgentWriteBytes(), 6u << 20);
  EXPECT_FALSE((*w)->CreatesMissingDir());

  auto r = MakeWorkload(SpecOf(v1::READ));
  ASSERT_OK(r);
  EXPECT_FALSE((*r)->CreatesFiles());
  EXPECT_EQ((*r)->AgentWriteBytes(), 0u);

  v1::PhaseSpec md = SpecOf(v1::MDTEST);
  md.set_md_op(v1::MD_TREE_REMOVE);
  auto m = MakeWorkload(md);
  ASSERT_OK(m);
  EXPECT_TRUE((*m)->CreatesFiles());
  EXPECT_TRUE((*m)->CreatesMissingDir());
  EXPECT_TRUE((*m)->RemovesTrees());
}

TEST(WorkloadRegistry, EachKindChecksItsOwnFields) {
  struct Case {
    v1::PhaseKind kind;
    const char* why;
  } cases[] = {
      {v1::WRITE, "transfer size is 0"},
      {v1::REWRITE, "transfer size is 0"},
      {v1::SMALL_FILES, "small_files is 0"},
      {v1::MDTEST, "mdtest phase without md_op"},
      {v1::COMMAND, "argv is empty"},
  };
  for (const Case& c : cases) {
    auto w = MakeWorkload(SpecOf(c.kind));
    ASSERT_OK(w);
    absl::Status s = (*w)->Validate();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.why;
    EXPECT_THAT(s.message(), HasSubstr(c.why));
  }
}

// A Cleanup's spec is checked as a Prepare's (security review: a datagen
// removal with total_tasks 0 looped for ever on an agent thread, an mdtest
// removal of branching 10 and depth 7 grew the agent to 2.4 GB), and no
// file is touched for a refused one.
TEST(WorkloadRegistry, RemovingAPhasesFilesChecksItsSpecFirst) {
  testing::TempDir tmp;
  v1::PhaseSpec datagen = SpecOf(v1::DATAGEN);
  datagen.set_num_files(4);
  datagen.set_total_tasks(0);
  auto looped = RemovePhaseFiles(datagen, tmp.path());
  EXPECT_EQ(looped.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(looped.status().message(), HasSubstr("do not fit in 0 tasks"));
  v1::PhaseSpec tree = SpecOf(v1::MDTEST);
  tree.set_md_op(v1::MD_TREE_REMOVE);
  tree.set_md_branching(10);
  tree.set_md_depth(7);
  auto deep = RemovePhaseFiles(tree, tmp.path());
  EXPECT_EQ(deep.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(deep.status().message(), HasSubstr("a tree of more than"));
  v1::PhaseSpec delayed = SpecOf(v1::WRITE);
  delayed.set_transfer_bytes(8);
  delayed.set_block_bytes(8);
  delayed.set_delay_seconds(86401);
  auto late = RemovePhaseFiles(delayed, tmp.path());
  EXPECT_THAT(late.status().message(), HasSubstr("delay_seconds 86401 is more than 86400"));
}

// record_bytes x samples_per_file wrapped in 64 bits: a datagen "file" of 2
// bytes was written and the train phase after it read short. Refused.
TEST(WorkloadRegistry, ADatasetWhoseFileSizeOverflowsIsRefused) {
  v1::PhaseSpec s = SpecOf(v1::DATAGEN);
  s.set_dataset_format(v1::DATASET_FORMAT_RECORDS);
  s.set_num_files(1);
  s.set_samples_per_file(2);
  s.set_record_bytes(9223372036854775809ull);
  auto w = MakeWorkload(s);
  ASSERT_OK(w);
  EXPECT_THAT((*w)->Validate().message(), HasSubstr("do not fit in a file"));
  s.set_record_bytes(1 << 20);
  s.set_record_stdev_bytes(uint64_t{1} << 61);  // the widest record is what counts
  EXPECT_THAT((*MakeWorkload(s))->Validate().message(), HasSubstr("do not fit in a file"));
  s.set_record_stdev_bytes(1 << 10);
  EXPECT_OK((*MakeWorkload(s))->Validate());
}

}  // namespace
}  // namespace lockstep
