#include "agent/fs/obdfilter.h"

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "common/process_runner.h"
#include "common/clock.h"
#include "common/status_macros.h"

namespace lockstep {
namespace {

constexpr uint64_t kPageBytes = 4096;
// A test_brw run may take long on a slow OST: an hour at most.
constexpr int kBrwTimeoutMs = 3'600'000;

absl::Status Lctl(const LustreTools& tools, const std::string& ost,
                  std::vector<std::string> args, CommandOutput* out = nullptr,
                  int timeout_ms = 0) {
  args.insert(args.begin(), tools.options().lctl);
  auto ran = RunCommand(args, timeout_ms > 0 ? timeout_ms : tools.options().timeout_ms);
  if (!ran.ok()) {
    return absl::Status(ran.status().code(),
                        absl::StrFormat("obdfilter survey of %s: %s: %s", ost,
                                        FormatCommand(args), ran.status().message()));
  }
  if (out != nullptr) *out = std::move(*ran);
  return absl::OkStatus();
}

absl::StatusOr<int> DeviceIndex(const LustreTools& tools, const std::string& ost,
                                const std::string& name) {
  CommandOutput dl;
  RETURN_IF_ERROR(Lctl(tools, ost, {"dl"}, &dl));
  for (const LustreDevice& d : ParseDeviceList(dl.stdout_text)) {
    if (d.name == name) return d.index;
  }
  return absl::NotFoundError(absl::StrFormat(
      "obdfilter survey of %s: the echo client %s is not in `lctl dl` after its attach", ost,
      name));
}

// `lctl --threads 1 -1 DEV test_brw COUNT MODE q PAGES 1tOBJ`, timed.
absl::StatusOr<int64_t> Brw(const LustreTools& tools, const std::string& ost, int dev,
                            const char* mode, uint64_t count, uint64_t pages,
                            const std::string& object) {
  const int64_t t0 = MonotonicNs();
  RETURN_IF_ERROR(Lctl(tools, ost,
                       {"--threads", "1", "-1", absl::StrCat(dev), "test_brw", absl::StrCat(count),
                        mode, "q", absl::StrCat(pages), absl::StrCat("1t", object)},
                       nullptr, kBrwTimeoutMs));
  return MonotonicNs() - t0;
}

}  // namespace

std::vector<LustreDevice> ParseDeviceList(std::string_view text) {
  std::vector<LustreDevice> out;
  for (absl::string_view line : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    LustreDevice d;
    if (f.size() < 4 || !absl::SimpleAtoi(f[0], &d.index)) continue;
    d.status = std::string(f[1]);
    d.type = std::string(f[2]);
    d.name = std::string(f[3]);
    out.push_back(std::move(d));
  }
  return out;
}

absl::StatusOr<std::string> ParseCreatedObject(std::string_view text) {
  const absl::string_view all(text.data(), text.size());
  for (absl::string_view line : absl::StrSplit(all, '\n')) {
    const size_t at = line.find("is object id ");
    if (at == absl::string_view::npos) continue;
    absl::string_view id = absl::StripAsciiWhitespace(line.substr(at + 13));
    id = id.substr(0, id.find(' '));
    if (!id.empty()) return std::string(id);
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("no \"is object id\" in lctl create's output: %.200s", all));
}

absl::StatusOr<std::vector<std::string>> LocalOsts(const LustreTools& tools) {
  CommandOutput dl;
  RETURN_IF_ERROR(Lctl(tools, "this server", {"dl"}, &dl));
  std::vector<std::string> out;
  for (const LustreDevice& d : ParseDeviceList(dl.stdout_text)) {
    if (d.type == "obdfilter" && d.status == "UP") out.push_back(d.name);
  }
  return out;
}

absl::StatusOr<ObdfilterBench> BenchOst(const LustreTools& tools, const std::string& ost,
                                        uint64_t bytes, uint64_t block_bytes) {
  if (block_bytes == 0 || block_bytes % kPageBytes != 0 || bytes % block_bytes != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "obdfilter survey of %s: %u bytes in blocks of %u: the block must be whole 4 KiB pages "
        "and the bytes whole blocks",
        ost, bytes, block_bytes));
  }
  const std::string echo = absl::StrCat("lockstep_ec_", ost);
  RETURN_IF_ERROR(Lctl(tools, ost, {"attach", "echo_client", echo, echo + "_UUID"}));
  // From here the echo client goes on every path.
  auto body = [&]() -> absl::StatusOr<ObdfilterBench> {
    RETURN_IF_ERROR(Lctl(tools, ost, {"--device", echo, "setup", ost}));
    ASSIGN_OR_RETURN(const int dev, DeviceIndex(tools, ost, echo));
    CommandOutput created;
    RETURN_IF_ERROR(Lctl(tools, ost, {"--device", absl::StrCat(dev), "create", "1"}, &created));
    ASSIGN_OR_RETURN(const std::string object, ParseCreatedObject(created.stdout_text));
    ObdfilterBench b{.bytes = bytes, .block_bytes = block_bytes};
    const uint64_t count = bytes / block_bytes, pages = block_bytes / kPageBytes;
    auto write = Brw(tools, ost, dev, "wx", count, pages, object);
    auto read = write.ok() ? Brw(tools, ost, dev, "rx", count, pages, object) : write;
    const absl::Status destroyed =
        Lctl(tools, ost, {"--device", absl::StrCat(dev), "destroy", object, "1"});
    if (!write.ok()) return write.status();
    if (!read.ok()) return read.status();
    RETURN_IF_ERROR(destroyed);
    b.write_ns = *write;
    b.read_ns = *read;
    return b;
  };
  absl::StatusOr<ObdfilterBench> result = body();
  const absl::Status cleaned = Lctl(tools, ost, {"--device", echo, "cleanup"});
  const absl::Status detached = Lctl(tools, ost, {"--device", echo, "detach"});
  if (!result.ok()) return result;
  RETURN_IF_ERROR(cleaned);
  RETURN_IF_ERROR(detached);
  return result;
}

}  // namespace lockstep
