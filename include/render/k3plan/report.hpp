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
std::string render(const Report& r, Format f);
std::string render_table(const Table& t);

}  // namespace k3plan
