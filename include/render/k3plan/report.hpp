#pragma once
// What every command returns: machine data (JSON with stable keys, units in key names) plus
// human tables. Rendering to table / json / yaml / csv / md is generic.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace k3plan {

struct Table {
  std::string title;
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> right_align;  // per column; default: numbers right-aligned when unset
  // columns (indices) that may be left out, in this order, when the table is too wide for the
  // terminal; the table then says which (machine formats always have every column)
  std::vector<std::size_t> optional_columns = {};
};

struct Report {
  nlohmann::json data;
  std::vector<Table> tables;
  std::vector<std::string> notes;        // shown under the tables
  std::vector<std::string> assumptions;  // every output that rests on an assumed figure lists it
  std::string raw_text;                  // when set, the table format prints exactly this (a script, a manifest)
  int exit_code = 0;                     // 0 ok/fits, 1 does not fit / check failed
};

enum class Format { table, json, yaml, csv, md };
Format parse_format(const std::string& s);

// How the table format is laid out for people: tables, titles and notes fit `width` columns (text
// columns wrap at spaces; 0 = no limit, `--wide`); the assumptions are counted and the first few
// listed (`--assumptions`: all). Machine formats (json, yaml, csv, md) ignore these.
inline constexpr std::size_t kTerminalWidth = 100;
inline constexpr std::size_t kAssumptionsShown = 5;
struct TextOptions {
  std::size_t width = kTerminalWidth;
  bool all_assumptions = false;
};
std::string render(const Report& r, Format f, const TextOptions& text = {});
// Escapes every string of a report (tables, notes, JSON strings and keys; raw_text keeps its
// newlines and tabs but loses other control characters and invalid bytes): what is echoed from
// input can neither drive a terminal nor make JSON/YAML output invalid (output_file.hpp).
void make_printable(Report& r);
std::string render_table(const Table& t, std::size_t max_width = kTerminalWidth);

}  // namespace k3plan
