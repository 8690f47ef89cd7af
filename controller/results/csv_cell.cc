#include "controller/results/csv_cell.h"

namespace lockstep {

std::string CsvCell(std::string_view text) {
  std::string cell;
  cell.reserve(text.size() + 3);
  if (!text.empty() && std::string_view("=+-@\t\r").find(text[0]) != std::string_view::npos) {
    cell += '\'';
  }
  cell += text;
  if (cell.find_first_of(",\"\n\r") == std::string::npos) return cell;
  std::string quoted = "\"";
  for (char c : cell) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace lockstep
