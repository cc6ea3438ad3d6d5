#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <k3plan/error.hpp>
#include <k3plan/report.hpp>

namespace k3plan {

Format parse_format(const std::string& s) {
  if (s == "table") return Format::table;
  if (s == "json") return Format::json;
  if (s == "yaml") return Format::yaml;
  if (s == "csv") return Format::csv;
  if (s == "md" || s == "markdown") return Format::md;
  const auto hint = closest_match(s, {"table", "json", "yaml", "csv", "md"});
  throw InputError(fmt::format("unknown format '{}'{}", s,
                               hint.empty() ? " (use table, json, yaml, csv or md)" : fmt::format("; did you mean '{}'?", hint)));
}

namespace {

// Display width in terminal columns (UTF-8 continuation bytes take no column).
std::size_t width(const std::string& s) {
  std::size_t w = 0;
  for (const char c : s) w += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return w;
}

bool looks_numeric(const std::string& s) {
  if (s.empty()) return false;
  const unsigned char c = static_cast<unsigned char>(s[0]);
  return std::isdigit(c) || ((c == '-' || c == '+' || c == '~') && s.size() > 1 && std::isdigit(static_cast<unsigned char>(s[1])));
}

void emit_yaml(YAML::Emitter& out, const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::object:
      out << YAML::BeginMap;
      for (const auto& [k, v] : j.items()) {
        out << YAML::Key << k << YAML::Value;
        emit_yaml(out, v);
      }
      out << YAML::EndMap;
      break;
    case nlohmann::json::value_t::array:
      out << YAML::BeginSeq;
      for (const auto& v : j) emit_yaml(out, v);
      out << YAML::EndSeq;
      break;
    case nlohmann::json::value_t::string:
      out << YAML::DoubleQuoted << j.get<std::string>();
      break;
    case nlohmann::json::value_t::boolean:
      out << j.get<bool>();
      break;
    case nlohmann::json::value_t::number_integer:
      out << j.get<std::int64_t>();
      break;
    case nlohmann::json::value_t::number_unsigned:
      out << j.get<std::uint64_t>();
      break;
    case nlohmann::json::value_t::number_float:
      out << j.dump();
      break;
    default:
      out << YAML::Null;
      break;
  }
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) {
    if (c == '"') o += '"';
    o += c;
  }
  return o + "\"";
}

std::string md_cell(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '|')
      o += "\\|";
    else if (c == '\n')
      o += ' ';
    else
      o += c;
  }
  return o;
}

}  // namespace

std::string render_table(const Table& t) {
  const std::size_t n = t.headers.size();
  std::vector<std::size_t> w(n, 0);
  for (std::size_t i = 0; i < n; ++i) w[i] = width(t.headers[i]);
  for (const auto& row : t.rows)
    for (std::size_t i = 0; i < n && i < row.size(); ++i) w[i] = std::max(w[i], width(row[i]));
  std::vector<bool> right(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    if (i < t.right_align.size())
      right[i] = t.right_align[i];
    else {
      bool num = !t.rows.empty();
      for (const auto& row : t.rows) num = num && (i >= row.size() || row[i].empty() || looks_numeric(row[i]) || row[i] == "-");
      right[i] = num;
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) {
      const std::string c = i < cells.size() ? cells[i] : "";
      const std::string pad(w[i] - std::min(w[i], width(c)), ' ');
      s += right[i] ? pad + c : c + pad;
      if (i + 1 < n) s += "  ";
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out;
  if (!t.title.empty()) out += t.title + "\n";
  out += line(t.headers);
  std::vector<std::string> rule;
  for (std::size_t i = 0; i < n; ++i) rule.emplace_back(w[i], '-');
  out += line(rule);
  for (const auto& row : t.rows) out += line(row);
  return out;
}

std::string render(const Report& r, Format f) {
  switch (f) {
    case Format::json:
      return r.data.dump(2) + "\n";
    case Format::yaml: {
      YAML::Emitter out;
      emit_yaml(out, r.data);
      return std::string(out.c_str()) + "\n";
    }
    case Format::csv: {
      std::string out;
      for (std::size_t ti = 0; ti < r.tables.size(); ++ti) {
        const auto& t = r.tables[ti];
        if (ti > 0) out += "\n";
        std::vector<std::string> h;
        for (const auto& x : t.headers) h.push_back(csv_cell(x));
        out += fmt::format("{}\n", fmt::join(h, ","));
        for (const auto& row : t.rows) {
          std::vector<std::string> c;
          for (const auto& x : row) c.push_back(csv_cell(x));
          out += fmt::format("{}\n", fmt::join(c, ","));
        }
      }
      return out;
    }
    case Format::md: {
      std::string out;
      for (const auto& t : r.tables) {
        if (!t.title.empty()) out += "### " + md_cell(t.title) + "\n\n";
        std::vector<std::string> h, sep;
        for (const auto& x : t.headers) {
          h.push_back(md_cell(x));
          sep.emplace_back("---");
        }
        out += fmt::format("| {} |\n| {} |\n", fmt::join(h, " | "), fmt::join(sep, " | "));
        for (const auto& row : t.rows) {
          std::vector<std::string> c;
          for (const auto& x : row) c.push_back(md_cell(x));
          out += fmt::format("| {} |\n", fmt::join(c, " | "));
        }
        out += "\n";
      }
      for (const auto& n : r.notes) out += "- " + md_cell(n) + "\n";
      if (!r.assumptions.empty()) {
        out += "\n**Assumptions**\n\n";
        for (const auto& a : r.assumptions) out += "- " + md_cell(a) + "\n";
      }
      return out;
    }
    case Format::table: {
      if (!r.raw_text.empty()) return r.raw_text;
      std::string out;
      for (std::size_t i = 0; i < r.tables.size(); ++i) {
        if (i > 0) out += "\n";
        out += render_table(r.tables[i]);
      }
      if (!r.notes.empty()) {
        if (!out.empty()) out += "\n";
        for (const auto& n : r.notes) out += n + "\n";
      }
      if (!r.assumptions.empty()) {
        out += "\nAssumptions (not published figures):\n";
        for (const auto& a : r.assumptions) out += "  * " + a + "\n";
      }
      return out;
    }
  }
  return {};
}

}  // namespace k3plan
