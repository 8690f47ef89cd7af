#include "controller/ior/ior_options.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <iterator>
#include <optional>
#include <regex>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace lockstep {
namespace {

using K = IorArgKind;

// createGlobalOptions() of hpc/ior src/parse_options.c, in its order, and
// POSIX_options() of src/aiori-POSIX.c (Lustre's when IOR is built with it).
constexpr IorOptionSpec kIorOptions[] = {
    {'a', nullptr, K::kValue, 's'},           {'A', nullptr, K::kValue, 'd'},
    {'b', nullptr, K::kValue, 'l'},           {'c', "collective", K::kFlag, 'd'},
    {'C', nullptr, K::kFlag, 'd'},            {'d', nullptr, K::kValue, 'd'},
    {'D', nullptr, K::kValue, 'd'},           {'e', nullptr, K::kFlag, 'd'},
    {'E', nullptr, K::kFlag, 'd'},            {'f', nullptr, K::kValue, 's'},
    {'F', nullptr, K::kFlag, 'd'},            {'g', nullptr, K::kFlag, 'd'},
    {'G', nullptr, K::kValue, 'd'},           {'i', nullptr, K::kValue, 'd'},
    {'j', nullptr, K::kValue, 'd'},           {'k', nullptr, K::kFlag, 'd'},
    {'K', nullptr, K::kFlag, 'd'},            {'l', "dataPacketType", K::kValue, 's'},
    {'m', nullptr, K::kFlag, 'd'},            {'M', nullptr, K::kValue, 's'},
    {'N', nullptr, K::kValue, 'd'},           {'o', nullptr, K::kValue, 's'},
    {'O', nullptr, K::kValue, 'p'},           {'Q', nullptr, K::kValue, 'd'},
    {'r', nullptr, K::kFlag, 'd'},            {'R', nullptr, K::kFlag, 'd'},
    {'s', nullptr, K::kValue, 'l'},           {'t', nullptr, K::kValue, 'l'},
    {'T', nullptr, K::kValue, 'd'},           {'u', nullptr, K::kFlag, 'd'},
    {'v', nullptr, K::kFlag, 'd'},            {'w', nullptr, K::kFlag, 'd'},
    {'W', nullptr, K::kFlag, 'd'},            {'x', nullptr, K::kFlag, 'd'},
    {'X', nullptr, K::kValue, 'd'},           {'y', nullptr, K::kFlag, 'd'},
    {'Y', nullptr, K::kFlag, 'd'},            {'z', nullptr, K::kFlag, 'd'},
    {0, "randomPrefill", K::kValue, 'l'},     {0, "random-offset-seed", K::kValue, 'd'},
    {'Z', nullptr, K::kFlag, 'd'},            {0, "warningAsErrors", K::kFlag, 'd'},
    {0, "dryRun", K::kFlag, 'd'},
    // POSIX backend.
    {0, "posix.odirect", K::kFlag, 'd'},      {0, "posix.rangelocks", K::kFlag, 'd'},
    {0, "posix.lustre.stripecount", K::kValue, 'd'},
    {0, "posix.lustre.stripesize", K::kValue, 'd'},
    {0, "posix.lustre.startost", K::kValue, 'd'},
    {0, "posix.lustre.ignorelocks", K::kFlag, 'd'},
    {0, "posix.lustre.pool", K::kValue, 's'},
};

// The other backends' options (aiori-DUMMY.c, aiori-MPIIO.c, aiori-MMAP.c).
constexpr IorOptionSpec kOtherBackendOptions[] = {
    {0, "dummy.delay-create", K::kValue, 'l'},  {0, "dummy.delay-close", K::kValue, 'l'},
    {0, "dummy.delay-sync", K::kValue, 'l'},    {0, "dummy.delay-xfer", K::kValue, 'l'},
    {0, "dummy.delay-only-rank0", K::kFlag, 'd'},
    {0, "mpiio.showHints", K::kFlag, 'd'},      {0, "mpiio.preallocate", K::kFlag, 'd'},
    {0, "mpiio.useStridedDatatype", K::kFlag, 'd'},
    {0, "mpiio.useFileView", K::kFlag, 'd'},    {0, "mpiio.hintsFileName", K::kValue, 's'},
    {0, "mmap.madv_dont_need", K::kFlag, 'd'},  {0, "mmap.madv_pattern", K::kFlag, 'd'},
};

constexpr const char* kGpu = "IOR's GPU buffers: lockstep's agents use host memory";

// DecodeDirective() of src/parse_options.c, in its order.
constexpr IorDirective kIorDirectives[] = {
    {"api", 'a', nullptr, 's'},
    {"summaryFile", 0, nullptr, 's'},
    {"saveRankPerformanceDetailsCSV", 0, nullptr, 'x',
     "IOR's per-rank CSV is not written; run.json has every task's figures"},
    {"savePerOpDataCSV", 0, nullptr, 'x',
     "IOR's per-operation CSV files are not written; run.json has the latency histograms"},
    {"summaryFormat", 0, nullptr, 's'},
    {"refnum", 'A', nullptr, 'a'},
    {"debug", 0, nullptr, 'x', "IOR's debug string is not implemented"},
    {"platform", 0, nullptr, 'x', "IOR's platform name is not used (Machine is the controller's host)"},
    {"testfile", 'o', nullptr, 's'},
    {"dualmount", 'y', nullptr, 'a'},
    {"allocateBufferOnGPU", 0, nullptr, 'x', kGpu},
    {"GPUid", 0, nullptr, 'x', kGpu},
    {"GPUDirect", 0, nullptr, 'x', kGpu},
    {"deadlineforstonewalling", 'D', nullptr, 'a'},
    {"stoneWallingWearOut", 0, nullptr, 'a'},
    {"stoneWallingWearOutIterations", 0, nullptr, 'x',
     "a stonewall count from an earlier IOR run is not implemented; a plan's read takes its "
     "write's count (stonewall_count_from)"},
    {"stoneWallingStatusFile", 0, nullptr, 'x',
     "a stonewall status file is not implemented; a plan's read takes its write's count "
     "(stonewall_count_from)"},
    {"maxtimeduration", 'T', nullptr, 'a'},
    {"mintimeduration", 0, nullptr, 'x',
     "a minimum run time (repeating from the file's start) is not implemented"},
    {"outlierthreshold", 'j', nullptr, 'a'},
    {"numnodes", 0, nullptr, 'x', "the nodes are the client agents (--agents, --local)"},
    {"numtasks", 'N', nullptr, 'a'},
    {"numtasksonnode0", 0, nullptr, 'x', "tasks per node are --tasks-per-agent"},
    {"repetitions", 'i', nullptr, 'a'},
    {"intertestdelay", 'd', nullptr, 'a'},
    {"interiodelay", 0, nullptr, 'x', "a delay between transfers is not implemented"},
    {"readfile", 'r', nullptr, 'a'},
    {"writefile", 'w', nullptr, 'a'},
    {"fileperproc", 'F', nullptr, 'a'},
    {"taskpernodeoffset", 'Q', nullptr, 'a'},
    {"reordertasksconstant", 'C', nullptr, 'a'},
    {"reordertasksrandom", 'Z', nullptr, 'a'},
    {"reordertasksrandomSeed", 'X', nullptr, 'a'},
    {"reordertasks", 'C', nullptr, 'a'},
    {"checkwrite", 'W', nullptr, 'a'},
    {"checkread", 'R', nullptr, 'a'},
    {"keepfile", 'k', nullptr, 'a'},
    {"keepfilewitherror", 'K', nullptr, 'a'},
    {"multiFile", 'm', nullptr, 'a'},
    {"warningAsErrors", 0, "warningAsErrors", 'a'},
    {"segmentcount", 's', nullptr, 'b'},
    {"blocksize", 'b', nullptr, 'b'},
    {"transfersize", 't', nullptr, 'b'},
    {"singlexferattempt", 'x', nullptr, 'a'},
    {"intraTestBarriers", 'g', nullptr, 'a'},
    {"verbose", 'v', nullptr, 'a'},
    {"collective", 'c', nullptr, 'a'},
    {"settimestampsignature", 'G', nullptr, 'a'},
    {"dataPacketType", 'l', nullptr, 's'},
    {"uniqueDir", 'u', nullptr, 'a'},
    {"useexistingtestfile", 'E', nullptr, 'a'},
    {"fsyncperwrite", 'Y', nullptr, 'a'},
    {"fsync", 'e', nullptr, 'a'},
    {"randomoffset", 'z', nullptr, 'a'},
    {"memoryPerTask", 'M', nullptr, 'x', "the memory hog is not implemented"},
    {"memoryPerNode", 'M', nullptr, 'x', "the memory hog is not implemented"},
    {"summaryalways", 0, nullptr, 'x', "a summary after every test of a script is not implemented"},
    {"useo_direct", 0, "posix.odirect", 'a'},
    // Not IOR 4.1's: IOR 2/3's, kept for lines written for them.
    {"lustreStripeCount", 0, nullptr, 's'},
};

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

const IorOptionSpec* FindIn(absl::Span<const IorOptionSpec> table, absl::string_view txt,
                            size_t idx) {
  for (const IorOptionSpec& o : table) {
    if (o.letter != 0 && o.letter == txt[idx]) return &o;
    if (txt.size() > 2 && txt[0] == '-' && o.long_name != nullptr && txt.substr(1) == o.long_name) {
      return &o;
    }
  }
  return nullptr;
}

const IorOptionSpec* FindOption(const OptionReaderTool& tool, absl::string_view txt, size_t idx) {
  const IorOptionSpec* o = FindIn(tool.options, txt, idx);
  return o != nullptr ? o : FindIn(kOtherBackendOptions, txt, idx);
}

std::string NameOf(const IorOptionSpec& o) {
  return o.letter != 0 ? std::string("-") + o.letter : std::string("--") + o.long_name;
}

absl::Status Invalid(const std::string& word, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s", word, why));
}

}  // namespace

absl::Span<const IorOptionSpec> IorOptionTable() { return kIorOptions; }
absl::Span<const IorOptionSpec> IorOtherBackendOptions() { return kOtherBackendOptions; }
bool IsIorOtherBackendOption(const IorOptionSpec& spec) {
  return &spec >= std::begin(kOtherBackendOptions) && &spec < std::end(kOtherBackendOptions);
}

const OptionReaderTool& IorReaderTool() {
  static const OptionReaderTool kTool{kIorOptions, "IOR", "IOR 4.1", "lockstep ior --help"};
  return kTool;
}

absl::StatusOr<int64_t> OptionNumber(const IorToken& t, const OptionReaderTool& tool,
                                     std::vector<std::string>* notes) {
  const std::string shown = t.name + " " + t.value;
  if (t.read_with_atoi) return IorAtoi(t.value);
  const int64_t v = IorStringToBytes(t.value);
  if (t.spec->type == 'd' && (v > INT_MAX || v < INT_MIN)) {
    return Invalid(shown, absl::StrFormat("%s warns \"parsing the number to integer, this "
                                          "produced an overflow!\" and runs with a truncated "
                                          "value; give a number below 2^31",
                                          tool.refuser));
  }
  static const std::regex kPlain("[+-]?[0-9]+[kKmMgGtTpP]?");
  if (!std::regex_match(t.value, kPlain)) {
    notes->push_back(absl::StrFormat("%s: read as %d, as %s's parser reads it (string_to_bytes: "
                                     "the whole number, then one unit letter)",
                                     shown, v, tool.refuser));
  }
  return v;
}
absl::Span<const IorDirective> IorDirectiveTable() { return kIorDirectives; }

int64_t IorStringToBytes(absl::string_view text) {
  // sscanf(" %lld %c "): blanks, a signed decimal, blanks, one character.
  size_t p = 0;
  while (p < text.size() && IsSpace(text[p])) ++p;
  if (p == text.size()) return 0;  // rc == EOF: size stays 0
  size_t q = p;
  if (q < text.size() && (text[q] == '+' || text[q] == '-')) ++q;
  const size_t digits = q;
  while (q < text.size() && std::isdigit(static_cast<unsigned char>(text[q]))) ++q;
  if (q == digits) return -1;  // rc == 0
  int64_t size = 0;
  const bool negative = text[p] == '-';
  for (size_t k = digits; k < q; ++k) {
    const int d = text[k] - '0';
    if (size > (INT64_MAX - d) / 10) {
      size = INT64_MAX;  // strtoll's saturation
      break;
    }
    size = size * 10 + d;
  }
  if (negative) size = -size;
  while (q < text.size() && IsSpace(text[q])) ++q;
  if (q == text.size()) return size;  // rc == 1
  int shift = 0;
  switch (text[q]) {
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    case 't': case 'T': shift = 40; break;
    case 'p': case 'P': shift = 50; break;
  }
  // size <<= shift, as two's complement does it.
  return static_cast<int64_t>(static_cast<uint64_t>(size) << shift);
}

int IorAtoi(absl::string_view text) {
  size_t p = 0;
  while (p < text.size() && IsSpace(text[p])) ++p;
  bool negative = false;
  if (p < text.size() && (text[p] == '+' || text[p] == '-')) negative = text[p++] == '-';
  int64_t v = 0;
  while (p < text.size() && std::isdigit(static_cast<unsigned char>(text[p]))) {
    v = std::min<int64_t>(v * 10 + (text[p++] - '0'), int64_t{INT_MAX} + 1);
  }
  v = negative ? -v : v;
  return static_cast<int>(std::clamp<int64_t>(v, INT_MIN, INT_MAX));
}

absl::StatusOr<std::vector<IorToken>> ReadIorWord(const std::vector<std::string>& args,
                                                  size_t* i, std::vector<std::string>* notes) {
  return ReadOptionWord(args, i, IorReaderTool(), notes);
}

absl::StatusOr<std::vector<IorToken>> ReadOptionWord(const std::vector<std::string>& args,
                                                     size_t* i, const OptionReaderTool& tool,
                                                     std::vector<std::string>* notes) {
  const std::string& word = args[*i];
  const size_t eq = word.find('=');
  const bool replaced_equal = eq != std::string::npos;
  std::optional<std::string> arg;
  if (replaced_equal && eq + 1 < word.size()) arg = word.substr(eq + 1);
  const std::string head = replaced_equal ? word.substr(0, eq) : word;
  if (head.empty() || head[0] != '-') {
    return Invalid(word, absl::StrFormat("%s refuses it (\"Error invalid argument\"): %s's "
                                         "options start with '-' and this is no option's value",
                                         tool.refuser, tool.refuser));
  }
  const absl::string_view txt = absl::string_view(head).substr(1);
  std::vector<IorToken> out;
  std::string skipped;
  bool took_next = false, after_value = false;
  for (size_t idx = 0; idx < txt.size(); ++idx) {
    if (txt[0] == '-' && idx > 0) break;  // a long option is one word
    const IorOptionSpec* o = FindOption(tool, txt, idx);
    if (o == nullptr) {
      if (!after_value && txt[idx] != '-') skipped += txt[idx];
      continue;
    }
    IorToken t;
    t.spec = o;
    t.name = txt[0] == '-' ? "--" + std::string(txt.substr(1)) : NameOf(*o);
    t.word = word;
    t.after_glued_value = after_value;
    if (o->arg == K::kFlag) {
      if (arg) t.flag_value = std::max(IorAtoi(*arg), 0);
    } else {
      if (!arg && !replaced_equal) {
        if (o->letter == txt[0] && txt.size() > 1) {
          arg = std::string(txt.substr(1));
        } else if (*i + 1 < args.size()) {
          arg = args[*i + 1];
          took_next = true;
        }
      }
      if (!arg) {
        return Invalid(t.name, absl::StrFormat("%s refuses it (\"Error, argument missing for "
                                               "option %s\"): give its value",
                                               tool.refuser, o->letter != 0 ? std::string(1, o->letter)
                                                              : std::string(o->long_name)));
      }
      t.value = *arg;
      after_value = !replaced_equal;
    }
    out.push_back(std::move(t));
  }
  if (took_next) ++*i;
  if (out.empty()) {
    if (txt == "h" || txt == "-help") {
      return Invalid(word, absl::StrFormat("%s prints its help and exits; Lockstep's list of "
                                           "the %s options it runs is `%s`",
                                           tool.refuser, tool.refuser, tool.help_command));
    }
    return Invalid(word, absl::StrFormat("not an option of %s; %s refuses it (\"Error invalid "
                                         "argument\", \"Invalid options\")",
                                         tool.release, tool.refuser));
  }
  if (!skipped.empty()) {
    notes->push_back(absl::StrFormat("%s: %s skips '%s' (no option of its own) and reads "
                                     "the rest of the word, and so does lockstep",
                                     word, tool.release, skipped));
  }
  return out;
}

const IorDirective* FindIorDirective(absl::string_view key) {
  for (const IorDirective& d : kIorDirectives) {
    if (absl::EqualsIgnoreCase(key, d.key)) return &d;
  }
  return nullptr;
}

absl::StatusOr<std::vector<IorKeyValue>> SplitIorDirectives(absl::string_view text) {
  const absl::string_view line = text;
  const size_t hash = text.find('#');
  if (hash != absl::string_view::npos) text = text.substr(0, hash);
  std::vector<IorKeyValue> out;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    if (item.size() < 3) {
      return Invalid("-O " + std::string(line),
                     absl::StrFormat("IOR refuses it (\"Invalid option substring string: \\\"%s\\\" "
                                     "in \\\"%s\\\"\"): give KEY=VALUE items separated by ','",
                                     item, line));
    }
    // " %[^=# \t\r\n] = %[^# \t\r\n] "
    auto stop = [](char c, bool key) {
      return c == '#' || c == ' ' || c == '\t' || c == '\r' || c == '\n' || (key && c == '=');
    };
    size_t p = 0;
    while (p < item.size() && IsSpace(item[p])) ++p;
    size_t k = p;
    while (k < item.size() && !stop(item[k], true)) ++k;
    IorKeyValue kv;
    kv.key = std::string(item.substr(p, k - p));
    while (k < item.size() && IsSpace(item[k])) ++k;
    bool ok = !kv.key.empty() && k < item.size() && item[k] == '=';
    if (ok) {
      ++k;
      while (k < item.size() && IsSpace(item[k])) ++k;
      size_t v = k;
      while (v < item.size() && !stop(item[v], false)) ++v;
      kv.value = std::string(item.substr(k, v - k));
      ok = !kv.value.empty();
    }
    if (!ok) {
      return Invalid("-O " + std::string(line),
                     absl::StrFormat("IOR refuses it (\"Syntax error in configuration options: "
                                     "%s\"): give KEY=VALUE",
                                     item));
    }
    out.push_back(std::move(kv));
  }
  return out;
}

}  // namespace lockstep
