// Comparison of Lockstep's output with a real IOR or mdtest output, for the
// conformance suite (tests/conformance/). Pure functions of text, so that
// each rule is unit-tested on its own, including on the mistakes it exists
// to catch (conformance_rules_test.cc).
//
// The rules, as a parser of IOR's output would need them:
//   - Lines: the same lines in the same order once measurements are masked
//     (numbers, dates, host names; runs of blanks count as one). Lockstep
//     may add lines starting with '#' anywhere, and a trailing section after
//     everything IOR prints in which no line matches an IOR parser pattern.
//   - Parameters: the values that describe the test rather than measure it
//     (Options block, block/xfer/iter columns, the summary's parameter
//     columns) are compared unmasked.
//   - Columns: in every table row, every field starts (left-aligned) or ends
//     (right-aligned) at the same column as in IOR's row.
//   - Files: the names and sizes left behind.
//   - JSON and CSV: the same keys (Lockstep may add keys).
#ifndef LOCKSTEP_TESTS_CONFORMANCE_CONFORMANCE_H_
#define LOCKSTEP_TESTS_CONFORMANCE_CONFORMANCE_H_

#include <string>
#include <vector>

namespace lockstep::conformance {

// A line with measurements masked: numbers → "#", dates → "<date>", the
// value of "Machine" → "<host>", blank runs → one blank, trailing blanks
// removed.
std::string MaskLine(const std::string& line);

// True for lines an IOR or mdtest parser keys on (^write, ^read, ^remove,
// ^Max , ^Operation, "Summary of all tests", "SUMMARY rate", "SUMMARY time").
bool LooksLikeIorResultLine(const std::string& line);

// A line of Lockstep's own ('#' first).
bool IsLockstepLine(const std::string& line);

// A difference IOR users accept by design, with its reason; printed by the
// suite and listed in docs/front-ends.md.
struct KnownDifference {
  std::string golden_masked;    // the golden line, masked
  std::string lockstep_masked;  // what Lockstep prints instead, masked
  std::string reason;
};

// Compares whole outputs by the rules above; returns one message per
// difference (empty = conformant). `known` lists accepted differences.
std::vector<std::string> CompareOutputs(const std::string& golden, const std::string& lockstep,
                                        const std::vector<KnownDifference>& known);

// Field spans of a table row: [start, end) of each run of non-blanks.
struct Field {
  size_t start, end;
  std::string text;
};
std::vector<Field> SplitFields(const std::string& line);

// Column rule for one pair of table rows; empty when they line up.
std::string CompareColumns(const std::string& golden, const std::string& lockstep);

// `find DIR -type f -printf '%P %s\n' | sort` in C++.
std::string ListFilesWithSizes(const std::string& dir);

// Compares files.txt with ListFilesWithSizes; with `sizes_vary`, only names
// are compared and the sizes must be equal to each other (stonewall runs).
std::vector<std::string> CompareFiles(const std::string& golden, const std::string& lockstep,
                                      bool sizes_vary);

// JSON: every key path of `golden` exists in `lockstep`, arrays have the
// same length. Errors name the path ("tests[0].Results[1].iops").
std::vector<std::string> CompareJsonKeys(const std::string& golden, const std::string& lockstep);

// CSV: the same header fields (more allowed) and the same number of rows.
std::vector<std::string> CompareCsv(const std::string& golden, const std::string& lockstep);

// ---- the suites' cases (conformance_test.cc, io500_conformance_test.cc) ----

// The text of the file at `path`; "" where it cannot be read.
std::string Read(const std::string& path);

// The names of the directories in `parent`, sorted: one case each (none
// where `parent` cannot be read).
std::vector<std::string> CaseNames(const std::string& parent);

}  // namespace lockstep::conformance

#endif  // LOCKSTEP_TESTS_CONFORMANCE_CONFORMANCE_H_
