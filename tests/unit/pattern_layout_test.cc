#include <stdlib.h>

#include <cstring>
#include <vector>

#include "common/layout.h"
#include "common/pattern.h"
#include "gtest/gtest.h"

namespace lockstep {
namespace {

TEST(Pattern, StampMatchesFullFill) {
  const size_t len = 1 << 20;
  std::vector<char> a(len), b(len);
  uint64_t tag = PatternTag(42, 3);
  FillPattern(a.data(), len, 0, tag);
  StampPattern(a.data(), len, 7 * len, tag);
  FillPattern(b.data(), len, 7 * len, tag);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), len), 0);
}

// The layout pattern.h documents, word by word.
uint64_t ReferenceWord(uint64_t offset, uint64_t tag) {
  const uint64_t in_block = offset % kPatternBlockBytes;
  if (in_block == 0) return offset;
  if (in_block == 8) return tag;
  return tag ^ (in_block * 0x9E3779B97F4A7C15ULL);
}

TEST(Pattern, FillMatchesTheLayoutWordByWord) {
  const uint64_t tag = PatternTag(7, 11);
  for (uint64_t offset : {uint64_t{0}, uint64_t{8}, uint64_t{4088}, uint64_t{4096},
                          uint64_t{3 * 4096 + 16}, uint64_t{1} << 40}) {
    for (size_t len : {size_t{0}, size_t{8}, size_t{4096}, size_t{4104}, size_t{8192 + 24},
                       size_t{3 * 4096 + 4088}, size_t{256 * 1024}, size_t{1000 * 1000 + 3}}) {
      std::vector<char> buf(len + 8, '\x5a');
      FillPattern(buf.data(), len, offset, tag);
      for (size_t i = 0; i + 8 <= len; i += 8) {
        uint64_t w;
        std::memcpy(&w, buf.data() + i, 8);
        ASSERT_EQ(w, ReferenceWord(offset + i, tag)) << "offset " << offset << " len " << len
                                                     << " word at " << i;
      }
      // A partial last word and what follows are not written.
      for (size_t i = len / 8 * 8; i < len + 8; ++i) {
        ASSERT_EQ(buf[i], '\x5a') << "offset " << offset << " len " << len << " byte " << i;
      }
    }
  }
}

TEST(Pattern, FindsAFlippedByteWithItsOffset) {
  const size_t len = 64 * 1024;
  std::vector<char> buf(len), scratch(len);
  uint64_t tag = PatternTag(1, 0);
  FillPattern(buf.data(), len, 1 << 20, tag);
  EXPECT_FALSE(CheckPattern(buf.data(), len, 1 << 20, tag, scratch.data()).has_value());
  buf[12345] ^= 0x10;
  auto m = CheckPattern(buf.data(), len, 1 << 20, tag, scratch.data());
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->file_offset, (1u << 20) + 12345);
  EXPECT_NE(m->expected_word, m->found_word);
  EXPECT_NE(m->Describe().find("offset 1060921"), std::string::npos) << m->Describe();
}

TEST(Pattern, EncodesWriterAndPlace) {
  const size_t len = 8192;
  std::vector<char> a(len), b(len), scratch(len);
  FillPattern(a.data(), len, 0, PatternTag(1, 0));
  // Another rank's data, or the right data at the wrong offset, is caught.
  EXPECT_TRUE(CheckPattern(a.data(), len, 0, PatternTag(1, 1), scratch.data()).has_value());
  EXPECT_TRUE(CheckPattern(a.data(), len, 8192, PatternTag(1, 0), scratch.data()).has_value());
  EXPECT_TRUE(CheckPattern(a.data(), len, 0, PatternTag(2, 0), scratch.data()).has_value());
}

v1::PhaseSpec Spec(bool fpp) {
  v1::PhaseSpec s;
  s.set_file_name("testfile");
  s.set_file_per_process(fpp);
  s.set_transfer_bytes(1024);
  s.set_block_bytes(4096);
  s.set_segments(3);
  s.set_total_tasks(4);
  return s;
}

TEST(Layout, FilePerProcessOffsets) {
  v1::PhaseSpec s = Spec(true);
  // offset = i*block + j*transfer
  EXPECT_EQ(TransferOffset(s, 2, 0, 0), 0u);
  EXPECT_EQ(TransferOffset(s, 2, 1, 3), 4096u + 3 * 1024);
  EXPECT_EQ(TransferOffset(s, 2, 2, 1), 2 * 4096u + 1024);
  EXPECT_EQ(RequiredFileSize(s, 2), 3 * 4096u);
  EXPECT_EQ(TaskFilePath("/d", s, 7 % 4), "/d/testfile.00000003");
  EXPECT_EQ(AggregateBytes(s), 3 * 4096u * 4);
}

TEST(Layout, SharedFileOffsets) {
  v1::PhaseSpec s = Spec(false);
  // offset = i*tasks*block + rank*block + j*transfer
  EXPECT_EQ(TransferOffset(s, 0, 0, 0), 0u);
  EXPECT_EQ(TransferOffset(s, 1, 0, 0), 4096u);
  EXPECT_EQ(TransferOffset(s, 3, 2, 2), 2 * 4 * 4096u + 3 * 4096u + 2 * 1024);
  EXPECT_EQ(RequiredFileSize(s, 3), 3 * 4 * 4096u);
  EXPECT_EQ(TaskFilePath("/d/", s, 3), "/d/testfile");
}

TEST(Layout, StridedIsBlockEqualsTransfer) {
  v1::PhaseSpec s = Spec(false);
  s.set_block_bytes(1024);
  s.set_segments(100);
  EXPECT_EQ(TransfersPerBlock(s), 1u);
  EXPECT_EQ(TransferOffset(s, 1, 5, 0), 5 * 4 * 1024u + 1024);
}

TEST(Layout, ReorderReadsAnotherTasksData) {
  v1::PhaseSpec s = Spec(true);
  s.set_reorder_shift(2);  // IOR -C with 2 tasks per node
  EXPECT_EQ(DataRank(s, 0), 2u);
  EXPECT_EQ(DataRank(s, 3), 1u);
  EXPECT_EQ(TaskFilePath("/d", s, 3), "/d/testfile.00000001");
}

TEST(Layout, MultiFileNamesEachRepetitionsFiles) {
  v1::PhaseSpec s = Spec(true);
  s.set_multi_file(true);  // IOR -m
  s.set_repetition(3);
  EXPECT_EQ(TaskFilePath("/d", s, 2), "/d/testfile.00000002.3");
  s.set_file_per_process(false);
  EXPECT_EQ(TaskFilePath("/d", s, 2), "/d/testfile.3");
}

// IOR's -Z offset with the C library's own srand()/rand(), as IOR calls them.
uint32_t IorOffsetWithLibc(uint32_t rank, int32_t seed, uint32_t rep, uint32_t tasks,
                           uint32_t per_node, uint32_t nodes) {
  int nodeoffset = 1;
  nodeoffset = nodeoffset < static_cast<int>(nodes) ? nodeoffset : static_cast<int>(nodes) - 1;
  unsigned int iseed0 = seed < 0 ? -1 * seed + rep : seed;
  srand(rank + iseed0);
  int offset = rand() % static_cast<int>(tasks);
  while (offset < nodeoffset * static_cast<int>(per_node)) offset = rand() % static_cast<int>(tasks);
  return static_cast<uint32_t>(offset);
}

TEST(Layout, RandomReorderIsIorsRandWithItsSeed) {
  for (uint32_t tasks : {1u, 2u, 4u, 12u, 64u}) {
    for (uint32_t per_node : {1u, 2u, 4u}) {
      if (tasks % per_node != 0) continue;
      const uint32_t nodes = tasks / per_node;
      for (int32_t seed : {0, 7, -3}) {
        for (uint32_t rep : {0u, 1u}) {
          for (uint32_t rank = 0; rank < tasks; ++rank) {
            ASSERT_EQ(IorRandomTaskOffset(rank, seed, rep, tasks, per_node, nodes),
                      IorOffsetWithLibc(rank, seed, rep, tasks, per_node, nodes))
                << "rank " << rank << " of " << tasks << ", seed " << seed << ", rep " << rep;
          }
        }
      }
    }
  }
  // Through the spec: 2 agents × 2 tasks; every offset is at least one
  // node's tasks (2), so no rank reads its own file (IOR's wrap-around may
  // still land on its own node).
  v1::PhaseSpec s = Spec(true);
  s.set_total_tasks(4);
  s.set_tasks(2);
  s.set_reorder_random(true);
  s.set_reorder_random_seed(11);
  for (uint32_t rank = 0; rank < 4; ++rank) {
    const uint32_t off = IorOffsetWithLibc(rank, 11, 0, 4, 2, 2);
    EXPECT_GE(off, 2u);
    EXPECT_EQ(DataRank(s, rank), (rank + off) % 4);
    EXPECT_NE(DataRank(s, rank), rank);
  }
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// IOR 4.1's rand64 for -z -z: the values below are IOR's own, printed by a
// program linked against hpc/ior 5fcf0ba's libaiori.a (srand64, rand64).
TEST(IorRand64, DrawsAsIorsRand64) {
  IorRand64 a(static_cast<uint64_t>(int64_t{-13}) * 3);
  EXPECT_EQ(a.Next(), 2260105399u);
  EXPECT_EQ(a.Next(), 11990118662380861843u);
  EXPECT_EQ(a.Next(), 9908840429886680678u);
  IorRand64 b(42);
  EXPECT_EQ(b.Next() % 50, 36u);
  EXPECT_EQ(b.Next() % 50, 4u);
  EXPECT_EQ(b.Next() % 50, 26u);
  // srand64(seed * (pretendRank + 1)), seed = random_seed + data rank with
  // a file per process (IOR's init_random_seed), as IOR's int.
  v1::PhaseSpec s;
  s.set_random_seed(static_cast<uint64_t>(-15));
  s.set_file_per_process(true);
  EXPECT_EQ(RandomBlocksState(s, 2), static_cast<uint64_t>(int64_t{-13}) * 3);
  s.set_file_per_process(false);
  s.set_random_seed(42);
  EXPECT_EQ(RandomBlocksState(s, 0), 42u);
}

// IOzone -F: each task's file is the name given for it, as given.
TEST(Layout, TaskFileNamesAreUsedAsGiven) {
  v1::PhaseSpec s;
  s.set_file_name("a");
  s.set_file_per_process(true);
  s.set_total_tasks(2);
  s.add_task_file_names("a");
  s.add_task_file_names("other");
  EXPECT_EQ(TaskFilePath("/d", s, 0), "/d/a");
  EXPECT_EQ(TaskFilePath("/d", s, 1), "/d/other");
  s.clear_task_file_names();
  EXPECT_EQ(TaskFilePath("/d", s, 1), "/d/a.00000001");
}

}  // namespace
}  // namespace lockstep
