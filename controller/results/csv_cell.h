// One cell of a CSV file Lockstep writes (`lockstep report --csv`, every CSV
// the results service serves), for text that came from a plan or a site:
// run.json's names, a site's system, a result's key.
#ifndef LOCKSTEP_CONTROLLER_RESULTS_CSV_CELL_H_
#define LOCKSTEP_CONTROLLER_RESULTS_CSV_CELL_H_

#include <string>
#include <string_view>

namespace lockstep {

// `text` as a CSV cell (RFC 4180): quoted, with its quotes doubled, when it
// holds a comma, a quote or a line break. A cell a spreadsheet would take for
// a formula (one that begins with =, +, -, @, a tab or a carriage return) is
// prefixed with ' first, as OWASP advises against CSV injection: a plan named
// =HYPERLINK("http://evil.example") is shown as that text, never run.
// Numbers Lockstep formats itself are written as they are, not through this.
std::string CsvCell(std::string_view text);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RESULTS_CSV_CELL_H_
