#include "controller/iozone/iozone_cli.h"

#include <algorithm>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/sizes.h"
#include "common/status_macros.h"
#include "controller/cli/cli_common.h"
#include "controller/cli/command_specs.h"
#include "controller/plan/limits.h"

namespace lockstep {
namespace {

// IOzone's options that take a value (its getopt string), so that a refused
// one is named with its value left alone.
constexpr std::string_view kIozoneValues = "bdfgHijJklLnPqrsStuUVXYy";

// IOzone's largest record (its MAXBUFFERSIZE).
constexpr uint64_t kIozoneMaxRecordBytes = uint64_t{16} << 20;

// Why an IOzone option is refused, for the options users meet most.
const std::map<char, const char*>& RefusalReasons() {
  static const auto* reasons = new std::map<char, const char*>{
      {'a', "auto mode is not throughput mode; run one -r/-s pair with -t N"},
      {'A', "auto mode is not throughput mode; run one -r/-s pair with -t N"},
      {'B', "mmap files are not implemented"},
      {'C', "the per-child transfer lines are not printed; run.json has every task's bytes"},
      {'D', "mmap files are not implemented"},
      {'E', "the extension tests (pread, pwrite, ...) are not implemented"},
      {'f', "throughput mode takes -F (one name per child)"},
      {'G', "mmap files are not implemented"},
      {'H', "POSIX async I/O is not implemented"},
      {'j', "strided access is not implemented"},
      {'k', "POSIX async I/O is not implemented"},
      {'l', "a range of children is not run in one go; run once per -t N"},
      {'u', "a range of children is not run in one go; run once per -t N"},
      {'o', "O_SYNC writes are not implemented; -e times an fsync at the end instead"},
      {'O', "results are in kB/sec only"},
      {'N', "results are in kB/sec only"},
      {'p', "processor cache purging is not implemented"},
      {'q', "auto mode options do not apply to throughput mode"},
      {'y', "auto mode options do not apply to throughput mode"},
      {'g', "auto mode options do not apply to throughput mode"},
      {'n', "auto mode options do not apply to throughput mode"},
      {'R', "the Excel report is not written; run.json has every figure"},
      {'b', "the Excel report is not written; run.json has every figure"},
      {'V', "IOzone's verify pattern is not implemented"},
      {'W', "file locking is not implemented"},
      {'Q', "offset/latency files are not written; run.json has latency histograms"},
      {'z', "auto mode options do not apply to throughput mode"},
      {'Z', "mmap mixing is not implemented"},
      {'h', "see lockstep iozone --help"},
      {'v', "lockstep is not IOzone; lockstep --version tells its version"},
  };
  return *reasons;
}

absl::Status Refused(const std::string& option, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "iozone: option %s is not supported by lockstep iozone; %s", option, why));
}

absl::Status Bad(const std::string& option, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrFormat("iozone: %s: %s", option, why));
}

// IOzone's options as given.
struct IozoneOptions {
  bool write = false, read = false, random = false;  // -i 0, -i 1, -i 2
  uint64_t record_bytes = 4096;      // -r (IOzone's default 4k)
  uint64_t file_bytes = 512 * 1024;  // -s (IOzone's default 512 kB)
  bool size_given = false;
  uint32_t children = 0;             // -t
  bool include_close = false, include_fsync = false, keep = false, direct = false;
  bool threads = false, no_stonewall = false, aggregate = false;
  std::vector<std::string> files;    // -F
  std::string client_file;           // -+m
};

// IOzone's sizes: a bare number is kB; k, m, g suffixes (either case).
absl::StatusOr<uint64_t> IozoneSize(const std::string& opt, const std::string& v) {
  std::string digits = v;
  uint64_t unit = 1024;
  if (!digits.empty()) {
    const char last = absl::ascii_tolower(digits.back());
    if (last == 'k' || last == 'm' || last == 'g') {
      unit = last == 'k' ? 1024 : last == 'm' ? 1024 * 1024 : uint64_t{1} << 30;
      digits.pop_back();
    }
  }
  uint64_t n = 0;
  if (digits.empty() || !absl::SimpleAtoi(digits, &n) || n == 0 || digits[0] == '+' ||
      n > (UINT64_MAX >> 2) / unit) {
    return Bad(opt + " " + v, "expected a size such as 64k, 1m or 8g (a bare number is kB)");
  }
  return n * unit;
}

absl::Status ApplyTest(const std::string& v, IozoneOptions* o) {
  uint64_t t = 0;
  if (!absl::SimpleAtoi(v, &t)) return Bad("-i " + v, "expected a test number");
  if (t == 0) o->write = true;
  else if (t == 1) o->read = true;
  else if (t == 2) o->random = true;
  else {
    return Refused("-i " + v, "tests 3 to 12 (backward, record rewrite, stride, fwrite, fread, "
                              "mixed, pwrite, pread, pwritev, preadv) are not implemented; use "
                              "-i 0, -i 1 and -i 2");
  }
  return absl::OkStatus();
}

// An option of kIozoneValues that Lockstep runs, with its value.
absl::Status ApplyValue(char letter, const std::string& v, IozoneOptions* o) {
  const std::string opt = std::string("-") + letter;
  switch (letter) {
    case 'i': return ApplyTest(v, o);
    case 'r': { ASSIGN_OR_RETURN(o->record_bytes, IozoneSize(opt, v)); return absl::OkStatus(); }
    case 's': {
      ASSIGN_OR_RETURN(o->file_bytes, IozoneSize(opt, v));
      o->size_given = true;
      return absl::OkStatus();
    }
    case 't': {
      ASSIGN_OR_RETURN(uint64_t n, CliUint(opt, v, 1, kMaxTotalTasks));
      o->children = static_cast<uint32_t>(n);
      return absl::OkStatus();
    }
  }
  auto it = RefusalReasons().find(letter);
  return Refused(opt, it != RefusalReasons().end() ? it->second : "it is not implemented");
}

// A flag without a value; `splash` gets IOzone's line for it.
absl::Status ApplyFlag(char letter, IozoneOptions* o, std::vector<std::string>* splash) {
  switch (letter) {
    case 'c': o->include_close = true; splash->push_back("\tInclude close in write timing\n"); break;
    case 'e': o->include_fsync = true; splash->push_back("\tInclude fsync in write timing\n"); break;
    case 'w': o->keep = true; splash->push_back("\tSetting no_unlink\n"); break;
    case 'I': o->direct = true; splash->push_back("\tO_DIRECT feature enabled\n"); break;
    case 'x': o->no_stonewall = true; splash->push_back("\tStonewall disabled\n"); break;
    case 'T': o->threads = true; break;
    default: {
      auto it = RefusalReasons().find(letter);
      return Refused(std::string("-") + letter,
                     it != RefusalReasons().end() ? it->second : "it is not implemented");
    }
  }
  return absl::OkStatus();
}

// -F: the next -t names (IOzone takes exactly as many as children). An
// option ("-i", Lockstep's "--local") ends them: it is not a file name.
absl::Status ReadFileNames(const std::vector<std::string>& args, size_t* i, IozoneOptions* o) {
  if (o->children == 0) return Bad("-F", "give -t N before -F (IOzone's rule)");
  o->files.clear();
  while (o->files.size() < o->children && *i + 1 < args.size() && args[*i + 1][0] != '-') {
    o->files.push_back(args[++*i]);
  }
  if (o->files.size() < o->children) {
    return Bad("-F", absl::StrFormat("%u file names for -t %u; give one name per child",
                                     o->files.size(), o->children));
  }
  return absl::OkStatus();
}

// "-+m FILE", "-+k"; other plus options refused by name.
absl::Status ApplyPlus(const std::vector<std::string>& args, size_t* i, IozoneOptions* o) {
  const std::string& a = args[*i];
  if (a == "-+k") {
    o->aggregate = true;
    return absl::OkStatus();
  }
  if (a == "-+m") {
    if (*i + 1 >= args.size()) return Bad("-+m", "needs the client file");
    o->client_file = args[++*i];
    return absl::OkStatus();
  }
  return Refused(a, "IOzone's plus options other than -+m and -+k are not implemented");
}

// Every word: Lockstep's long options, IOzone's (`words` gets IOzone's own).
absl::Status ReadIozoneArgs(const std::vector<std::string>& args, const FileReader& read_file,
                            IozoneOptions* o, CliCommand* cmd, std::vector<std::string>* words,
                            std::vector<std::string>* splash) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    ASSIGN_OR_RETURN(bool own, ParseControllerOption(args, &i, IozoneCommandSpec(),
                                                     &cmd->controller, read_file));
    if (own) continue;
    if (a.rfind("--", 0) == 0) return UnknownFlagError(a, IozoneCommandSpec());
    if (a.size() < 2 || a[0] != '-') {
      return Bad(a, "unexpected argument; IOzone's options start with '-' (file names follow -F)");
    }
    const size_t first = i;
    if (a[1] == '+') {
      RETURN_IF_ERROR(ApplyPlus(args, &i, o));
    } else if (a == "-F") {
      RETURN_IF_ERROR(ReadFileNames(args, &i, o));
    } else {
      for (size_t j = 1; j < a.size(); ++j) {
        const char letter = a[j];
        if (kIozoneValues.find(letter) == std::string_view::npos) {
          RETURN_IF_ERROR(ApplyFlag(letter, o, splash));
          continue;
        }
        std::string v = a.substr(j + 1);
        if (v.empty()) {
          if (i + 1 >= args.size()) return Bad(std::string("-") + letter, "needs a value");
          v = args[++i];
        }
        RETURN_IF_ERROR(ApplyValue(letter, v, o));
        break;
      }
    }
    for (size_t j = first; j <= i; ++j) words->push_back(args[j]);
  }
  return absl::OkStatus();
}

// One line of IOzone's client file.
struct ClientLine {
  std::string address;
  std::string workdir;
  int line = 0;
};

// IOzone's -+m file: "host workdir path_to_iozone" a line (blank lines and
// '#' comments skipped); the first `children` lines, one child each.
absl::StatusOr<std::vector<ClientLine>> ReadClientFile(const std::string& path,
                                                       const FileReader& read_file,
                                                       uint32_t children) {
  auto text = read_file(path);
  if (!text.ok()) return Bad("-+m " + path, std::string(text.status().message()));
  std::vector<ClientLine> lines;
  int n = 0;
  for (absl::string_view raw : absl::StrSplit(*text, '\n')) {
    ++n;
    std::vector<std::string> f =
        absl::StrSplit(raw.substr(0, raw.find('#')), absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (f.empty()) continue;
    if (f.size() < 3) {
      return Bad(absl::StrFormat("-+m %s:%d", path, n),
                 "expected \"host workdir path_to_iozone\" (IOzone's client file)");
    }
    std::string address = f[0];
    if (address.find(':') == std::string::npos) {
      address = absl::StrFormat("%s:%d", address, kIozoneDefaultAgentPort);
    }
    lines.push_back({address, f[1], n});
    if (lines.size() == children) break;
  }
  if (lines.size() < children) {
    return Bad("-+m " + path,
               absl::StrFormat("lists %u clients for -t %u; IOzone runs one child a line: list "
                               "%u lines or lower -t",
                               lines.size(), children, children));
  }
  return lines;
}

// -+m: the agents (each host once, in order) and the phase directory; every
// host must run as many children (Lockstep runs the same tasks per agent)
// and every line must name the same workdir (one directory per phase).
absl::Status PlaceOnClients(const IozoneOptions& o, const FileReader& read_file, CliCommand* cmd,
                            std::string* dir) {
  if (!cmd->controller.agents.empty() || cmd->controller.local_agents > 0) {
    return Bad("-+m", "names the agents; drop --agents, --hostfile and --local");
  }
  ASSIGN_OR_RETURN(std::vector<ClientLine> lines,
                   ReadClientFile(o.client_file, read_file, o.children));
  std::map<std::string, uint32_t> count;
  for (const ClientLine& l : lines) {
    if (l.workdir != lines.front().workdir) {
      return Bad(absl::StrFormat("-+m %s:%d", o.client_file, l.line),
                 absl::StrFormat("workdir %s differs from %s (line %d); lockstep runs a test in "
                                 "one directory: give every line the same workdir",
                                 l.workdir, lines.front().workdir, lines.front().line));
    }
    if (count[l.address]++ == 0) cmd->controller.agents.push_back(l.address);
  }
  for (const auto& [address, n] : count) {
    if (n != count[lines.front().address]) {
      return Bad("-+m " + o.client_file,
                 absl::StrFormat("%s has %u children and %s %u; lockstep runs as many children "
                                 "on every agent: list each host equally often",
                                 address, n, lines.front().address,
                                 count[lines.front().address]));
    }
  }
  *dir = lines.front().workdir;
  return absl::OkStatus();
}

// The directory of -F's names (they must share one); their file names, one
// per child, in *names: IOzone writes exactly the names it is given.
absl::StatusOr<std::string> DirOfFiles(const std::vector<std::string>& files,
                                       std::vector<std::string>* names) {
  std::string dir, name, first_dir;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string& f = files[i];
    SplitOutputPath(f, &dir, &name);
    if (i == 0) first_dir = dir;
    if (dir != first_dir) {
      return Bad("-F", absl::StrFormat("%s and %s are in different directories; lockstep runs a "
                                       "test in one directory: give names in one directory",
                                       files.front(), f));
    }
    if (name.empty() || name == "." || name == "..") {
      return Bad("-F", absl::StrFormat("\"%s\" names no file; give a file name per child", f));
    }
    if (std::find(names->begin(), names->end(), name) != names->end()) {
      return Bad("-F", absl::StrFormat("%s is given twice; lockstep gives each child a file of "
                                       "its own: give distinct names",
                                       f));
    }
    names->push_back(name);
  }
  return first_dir.empty() ? std::string(".") : first_dir;
}

absl::Status CheckSizes(const IozoneOptions& o) {
  if (o.children == 0) {
    return Bad("-t", "lockstep iozone runs IOzone's throughput mode: give -t N (children)");
  }
  if (!o.write && !o.read && !o.random) {
    return Bad("-i", "give the tests: -i 0 (write, rewrite), -i 1 (read, re-read), -i 2 "
                     "(random read, random write); lockstep iozone runs those only");
  }
  if (o.record_bytes > kIozoneMaxRecordBytes) {
    return Bad(absl::StrFormat("-r %u kB", o.record_bytes / 1024),
               absl::StrFormat("IOzone's records are at most %u kB",
                               kIozoneMaxRecordBytes / 1024));
  }
  if (o.direct && o.record_bytes % kDirectIoAlignBytes != 0) {
    return Bad("-I", absl::StrFormat("O_DIRECT needs -r a multiple of %u bytes",
                                     kDirectIoAlignBytes));
  }
  const uint64_t per_child = o.aggregate ? o.file_bytes / o.children : o.file_bytes;
  if (per_child < o.record_bytes) {
    return Bad(absl::StrFormat("-s %u kB", o.file_bytes / 1024),
               absl::StrFormat("%s a child is smaller than the record (-r %u kB); raise -s",
                               HumanBytes(per_child), o.record_bytes / 1024));
  }
  return absl::OkStatus();
}

// The phases, in IOzone's order of its throughput tests.
void AddIozonePhases(const IozoneOptions& o, const std::string& dir,
                     const std::vector<std::string>& names, CliCommand* cmd,
                     IozoneCommandInfo* info) {
  PhasePlan base;
  base.dir = dir;
  base.file_name = names.empty() ? "iozone.DUMMY" : names.front();
  base.file_names = names;  // -F: as given (else iozone.DUMMY.<child>)
  base.file_per_process = true;
  base.transfer_bytes = o.record_bytes;
  if (o.aggregate) {
    base.total_bytes = o.file_bytes;  // -+k: split over the children (SplitAggregate)
  } else {
    base.block_bytes = o.file_bytes / o.record_bytes * o.record_bytes;  // IOzone's numrecs64
  }
  base.direct = o.direct;
  base.keep = o.keep;
  auto add = [&](IozoneTest test, const char* name, v1::PhaseKind kind, bool random) {
    PhasePlan p = base;
    p.name = name;
    p.kind = kind;
    // A one-record file has nothing to shuffle (and a plan refuses it).
    p.random_offsets = random && (p.total_bytes > 0 || p.block_bytes > p.transfer_bytes);
    p.fsync = kind == v1::WRITE && o.include_fsync;
    cmd->plan.phases.push_back(p);
    info->tests.emplace_back(test, name);
  };
  if (o.write) {
    add(IozoneTest::kInitialWrite, "initial-write", v1::WRITE, false);
    add(IozoneTest::kRewrite, "rewrite", v1::WRITE, false);
  }
  if (o.read) {
    add(IozoneTest::kRead, "read", v1::READ, false);
    add(IozoneTest::kReread, "re-read", v1::READ, false);
  }
  if (o.random) {
    add(IozoneTest::kRandomRead, "random-read", v1::READ, true);
    add(IozoneTest::kRandomWrite, "random-write", v1::WRITE, true);
  }
}

void FillInfo(const IozoneOptions& o, const std::vector<std::string>& words, uint32_t agents,
              IozoneCommandInfo* info) {
  info->command_line = "iozone";
  for (const std::string& w : words) info->command_line += " " + w;
  info->children = o.children;
  const uint64_t per_child = o.aggregate ? o.file_bytes / o.children : o.file_bytes;
  info->file_kb = per_child / 1024;
  info->record_kb = o.record_bytes / 1024;
  info->threads = o.threads;
  info->stonewall = !o.no_stonewall;
  info->include_close = o.include_close;
  info->agents = agents;
}

absl::StatusOr<CliCommand> ParseIozone(const std::vector<std::string>& args,
                                       const FileReader& read_file, IozoneCommandInfo* info_out) {
  CliCommand cmd;
  cmd.plan.name = "iozone";
  cmd.plan.source = "iozone command line";
  IozoneOptions o;
  IozoneCommandInfo info;
  std::vector<std::string> words;
  RETURN_IF_ERROR(ReadIozoneArgs(args, read_file, &o, &cmd, &words, &info.splash));
  RETURN_IF_ERROR(CheckSizes(o));
  std::string dir = ".";
  std::vector<std::string> names;
  if (!o.files.empty()) {
    ASSIGN_OR_RETURN(dir, DirOfFiles(o.files, &names));
  }
  if (!o.client_file.empty()) {
    std::string workdir;
    RETURN_IF_ERROR(PlaceOnClients(o, read_file, &cmd, &workdir));
    if (o.files.empty()) dir = workdir;
  }
  AddIozonePhases(o, dir, names, &cmd, &info);
  RETURN_IF_ERROR(PlaceTasks(o.children, "-t", &cmd));
  if (!o.aggregate && o.file_bytes % o.record_bytes != 0) {
    cmd.notes.push_back(absl::StrFormat(
        "-s %u kB is not a multiple of -r %u kB: each child moves %u records, as IOzone",
        o.file_bytes / 1024, o.record_bytes / 1024, o.file_bytes / o.record_bytes));
  }
  const uint32_t agents = cmd.controller.agents.empty()
                              ? static_cast<uint32_t>(cmd.controller.local_agents)
                              : static_cast<uint32_t>(cmd.controller.agents.size());
  FillInfo(o, words, agents, &info);
  cmd.tool_command_line = info.command_line;
  RETURN_IF_ERROR(SetPlanText(&cmd.plan, "iozone"));
  if (info_out != nullptr) *info_out = std::move(info);
  return cmd;
}

}  // namespace

absl::StatusOr<CliCommand> ParseIozoneCommandLine(const std::vector<std::string>& args,
                                                  const FileReader& read_file,
                                                  IozoneCommandInfo* info) {
  auto cmd = ParseIozone(args, read_file, info);
  if (cmd.ok() || absl::StartsWith(cmd.status().message(), "iozone: ")) return cmd;
  // The shared translators' errors (--agents, -t over the agents) get the prefix too.
  return absl::Status(cmd.status().code(), absl::StrCat("iozone: ", cmd.status().message()));
}

}  // namespace lockstep
