// The layers table (issue 42): each end-to-end write or read figure of a test
// beside the network (a net phase) and the servers' back end (a backend
// phase) measured in the same test, and the efficiency
//   end-to-end / min(network, back end)
// over the layers that were measured: how much of the hardware below the
// file system the end-to-end figure is. Lustre's manual expects 85-90 % of
// the raw device; a site comparing with another compares this ratio, which
// does not depend on how many servers each has.
//
// Every figure is the median over the test's repetitions, with its spread
// (max - min); the efficiency is taken per repetition (each end-to-end
// figure against the layers of the same repetition) when the layers ran in
// every repetition, else against their medians. The net phase measures the
// direction clients -> servers: for a read it stands for the way back too
// (say so where it matters: an asymmetric network is not seen).
//
// Pure functions of the records.
#ifndef LOCKSTEP_CONTROLLER_RECORD_LAYERS_H_
#define LOCKSTEP_CONTROLLER_RECORD_LAYERS_H_

#include <string>
#include <vector>

#include "lockstep/v1/results.pb.h"

namespace lockstep {

// The rows of `test` (its phases of every repetition): one per phase of kind
// write or read, in plan order, when the test has a net or backend phase
// that succeeded; empty otherwise. Failed phases are left out.
std::vector<v1::LayerRow> LayersOf(const v1::TestRecord& test);

// The efficiency of each accepted repetition of the end-to-end phase named
// `phase` in `test`, as LayersOf takes them (history, compare and gate's
// "efficiency" figure); empty without a lower layer in its direction.
std::vector<double> EfficienciesOf(const v1::TestRecord& test, const std::string& phase);

// The printed table, one line each ("# " is the caller's):
//   layers: clients 2, write "w": end-to-end 812.4 MiB/s (±10.2), network
//   1101.0 (±3.1), back end 950.3 (±8.0): efficiency 85.5% (±1.2), bound by
//   the back end
std::vector<std::string> LayersLines(const std::vector<v1::LayerRow>& rows);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RECORD_LAYERS_H_
