// Lustre's obdfilter-survey (lustre-iokit, case=disk) for one OST of this
// server, through lctl, as the script does it: an echo client attached to
// the OST's obdfilter device, one object created on it, `lctl test_brw`
// writing then reading that object in blocks of whole pages (timed here,
// from the start of lctl to its end, as the script times its runs), then
// the object destroyed and the echo client cleaned up and detached, on
// every path once it was attached. The OST's back end without the network
// or any client: what Lustre's manual says the file system should deliver
// 85-90 % of.
#ifndef LOCKSTEP_AGENT_FS_OBDFILTER_H_
#define LOCKSTEP_AGENT_FS_OBDFILTER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/fs/lustre_tools.h"

namespace lockstep {

// One line of `lctl dl`: "  3 UP obdfilter lustre-OST0000 lustre-OST0000_UUID 5".
struct LustreDevice {
  int index = -1;
  std::string status;  // "UP", "AT", "ST"
  std::string type;    // "obdfilter", "echo_client", "osc", ...
  std::string name;
};
std::vector<LustreDevice> ParseDeviceList(std::string_view text);

// The object id `lctl --device N create 1` made ("... is object id 0x2"),
// InvalidArgument quoting the output otherwise.
absl::StatusOr<std::string> ParseCreatedObject(std::string_view text);

// The OSTs this server serves: the obdfilter devices `lctl dl` lists UP.
absl::StatusOr<std::vector<std::string>> LocalOsts(const LustreTools& tools);

struct ObdfilterBench {
  uint64_t bytes = 0;
  uint64_t block_bytes = 0;
  int64_t write_ns = 0;
  int64_t read_ns = 0;
};

// The survey of `ost` (one object, one thread): `bytes` written then read in
// blocks of `block_bytes` (a multiple of the 4 KiB page). Errors name the OST
// and the lctl command, with its output.
absl::StatusOr<ObdfilterBench> BenchOst(const LustreTools& tools, const std::string& ost,
                                        uint64_t bytes, uint64_t block_bytes);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_FS_OBDFILTER_H_
