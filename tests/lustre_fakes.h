// Fake `lfs` and `lctl` programs (shell scripts) for tests of the Lustre
// hooks: each appends "tool<TAB>arg1<TAB>arg2..." to DIR/argv.log; lctl keeps
// parameters as files in DIR/state/ (one per parameter, named like it), with
// a version, two OSCs' checksums (1 and 0) and one lock LRU to start with;
// `lfs setstripe` appends what its last argument resolves to (readlink -f)
// to DIR/resolved.log; `lfs getstripe` prints kGetStripeDir (with -d) or kGetStripeFile;
// `lctl hang` starts a sleep and writes its pid to DIR/sleep.pid.
#ifndef LOCKSTEP_TESTS_LUSTRE_FAKES_H_
#define LOCKSTEP_TESTS_LUSTRE_FAKES_H_

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace lockstep::testing {

inline constexpr char kGetStripeDir[] =
    "stripe_count:  4 stripe_size:   1048576 pattern:       raid0 stripe_offset: -1 "
    "pool:          flash\n";

inline constexpr char kGetStripeFile[] =
    "/mnt/lustre/file\n"
    "lmm_stripe_count:  2\n"
    "lmm_stripe_size:   4194304\n"
    "lmm_pattern:       raid0\n"
    "lmm_layout_gen:    0\n"
    "lmm_stripe_offset: 1\n"
    "\tobdidx\t\t objid\t\t objid\t\t group\n"
    "\t     1\t            35\t         0x23\t             0\n"
    "\t     0\t            35\t         0x23\t             0\n";

// Writes DIR/bin/lfs, DIR/bin/lctl and DIR/state/; false if a file could
// not be written.
inline bool WriteFakeLustreTools(const std::string& dir) {
  auto write = [](const std::string& path, const std::string& text, mode_t mode) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream f(path, std::ios::trunc);
    f << text;
    f.close();
    return f.good() && ::chmod(path.c_str(), mode) == 0;
  };
  const std::string log = dir + "/argv.log";
  const std::string state = dir + "/state";
  bool ok = true;
  std::string log_line =
        absl::StrFormat("{ printf '%%s' \"${0##*/}\"; for a in \"$@\"; do printf '\\t%%s' "
                        "\"$a\"; done; printf '\\n'; } >> '%s'\n",
                        log);
  ok &= write(dir + "/bin/lfs",
              absl::StrFormat("#!/bin/sh\n%s"
                              "case \"$1\" in\n"
                              "setstripe)\n"
                              "  for last in \"$@\"; do :; done\n"
                              "  readlink -f \"$last\" >> '%s' || true;;\n"
                              "getstripe)\n"
                              "  if [ \"$2\" = -d ]; then printf '%%s' '%s';\n"
                              "  else printf '%%s' '%s'; fi;;\n"
                              "esac\n",
                              log_line, dir + "/resolved.log", kGetStripeDir, kGetStripeFile),
              0755);
  ok &= write(dir + "/bin/lctl",
              absl::StrFormat(
                  "#!/bin/sh\n%s"
                  "STATE='%s'\n"
                  "case \"$1\" in\n"
                  "get_param)\n"
                  "  shift\n"
                  "  noname=; if [ \"$1\" = -n ]; then shift; noname=1; fi\n"
                  "  found=\n"
                  "  for f in \"$STATE\"/$1; do\n"
                  "    [ -e \"$f\" ] || continue\n"
                  "    found=1\n"
                  "    if [ -n \"$noname\" ]; then cat \"$f\";\n"
                  "    else printf '%%s=%%s\\n' \"${f##*/}\" \"$(cat \"$f\")\"; fi\n"
                  "  done\n"
                  "  if [ -z \"$found\" ]; then\n"
                  "    echo \"error: get_param: param_path '$1': No such file or directory\" >&2\n"
                  "    exit 2\n"
                  "  fi;;\n"
                  "set_param)\n"
                  "  shift\n"
                  "  for kv in \"$@\"; do\n"
                  "    name=${kv%%%%=*}; val=${kv#*=}; found=\n"
                  "    for f in \"$STATE\"/$name; do\n"
                  "      [ -e \"$f\" ] && { printf '%%s\\n' \"$val\" > \"$f\"; found=1; }\n"
                  "    done\n"
                  "    if [ -z \"$found\" ]; then\n"
                  "      echo \"error: set_param: param_path '$name': No such file\" >&2\n"
                  "      exit 2\n"
                  "    fi\n"
                  "  done;;\n"
                  // obdfilter-survey's commands (agent/fs/obdfilter.h): two
                  // OSTs; echo clients listed once attached; test_brw fails
                  // when DIR/brw_fail exists.
                  "dl)\n"
                  "  echo '  0 UP osd-ldiskfs lustre-OST0000-osd lustre-OST0000-osd_UUID 4'\n"
                  "  echo '  1 UP obdfilter lustre-OST0000 lustre-OST0000_UUID 5'\n"
                  "  echo '  2 UP obdfilter lustre-OST0001 lustre-OST0001_UUID 5'\n"
                  "  [ -e \"$STATE/../echo\" ] && cat \"$STATE/../echo\"; true;;\n"
                  "attach)\n"
                  "  echo \"  3 AT echo_client $3 $4 1\" >> \"$STATE/../echo\";;\n"
                  "--device)\n"
                  "  case \"$3\" in\n"
                  "  create) echo 'create: 1 objects'; echo 'create: #1 is object id 0x2';;\n"
                  "  esac;;\n"
                  "--threads)\n"
                  "  if [ -e \"$STATE/../brw_fail\" ]; then echo 'test_brw: write failed' >&2; "
                  "exit 5; fi;;\n"
                  "hang)\n"
                  "  sleep 30 &\n"
                  "  echo $! > '%s/sleep.pid'\n"
                  "  wait;;\n"
                  "esac\n",
                  log_line, state, dir),
              0755);
  ok &= write(state + "/version", "2.15.3\n", 0644);
  ok &= write(state + "/osc.lustre-OST0000-osc-ffff8803.checksums", "1\n", 0644);
  ok &= write(state + "/osc.lustre-OST0001-osc-ffff8803.checksums", "0\n", 0644);
  ok &= write(state + "/ldlm.namespaces.lustre-OST0000-osc-ffff8803.lru_size", "0\n", 0644);
  return ok;
}

// DIR/argv.log, one entry per tool run.
inline std::vector<std::string> FakeLustreLog(const std::string& dir) {
  std::ifstream f(dir + "/argv.log");
  std::stringstream ss;
  ss << f.rdbuf();
  return absl::StrSplit(ss.str(), '\n', absl::SkipEmpty());
}

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_LUSTRE_FAKES_H_
