#include "controller/run/kept_files.h"

#include "absl/strings/str_format.h"

namespace lockstep {
namespace {

constexpr int kNamed = 16;  // a file-per-process phase of many tasks: the first few

}  // namespace

std::vector<v1::PhaseSpec> TakeFilesOf(const v1::PhaseSpec& failed,
                                       std::vector<v1::PhaseSpec>* written) {
  std::vector<v1::PhaseSpec> taken, left;
  for (v1::PhaseSpec& s : *written) {
    const bool same = s.dir() == failed.dir() && s.file_name() == failed.file_name();
    (same ? taken : left).push_back(std::move(s));
  }
  *written = std::move(left);
  return taken;
}

std::string KeptFilesNote(const google::protobuf::RepeatedPtrField<std::string>& host_paths) {
  std::string out = "the files of the failed verification are kept for inspection (remove them "
                    "when done):";
  const int n = host_paths.size();
  for (int i = 0; i < n && i < kNamed; ++i) out += (i == 0 ? " " : ", ") + host_paths[i];
  if (n > kNamed) out += absl::StrFormat(" and %d more (run.json: kept_files)", n - kNamed);
  return out;
}

}  // namespace lockstep
