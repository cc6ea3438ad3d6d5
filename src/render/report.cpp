#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <k3plan/error.hpp>
#include <k3plan/output_file.hpp>
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

namespace {

// Splits `s` into lines of at most `w` columns at spaces; a word longer than `w` is cut.
std::vector<std::string> wrap(const std::string& s, std::size_t w) {
  std::vector<std::string> out;
  if (w == 0 || width(s) <= w) return {s};
  std::string line;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t j = s.find(' ', i);
    if (j == std::string::npos) j = s.size();
    std::string word = s.substr(i, j - i);
    i = j + 1;
    while (width(word) > w) {  // cut an overlong word (a long path or flag list without spaces)
      if (!line.empty()) out.push_back(line), line.clear();
      std::size_t cut = 0, cols = 0;
      while (cut < word.size() && cols < w) {
        ++cut;
        while (cut < word.size() && (static_cast<unsigned char>(word[cut]) & 0xC0) == 0x80) ++cut;
        ++cols;
      }
      out.push_back(word.substr(0, cut));
      word = word.substr(cut);
    }
    if (line.empty())
      line = word;
    else if (width(line) + 1 + width(word) <= w)
      line += " " + word;
    else
      out.push_back(line), line = word;
  }
  if (!line.empty() || out.empty()) out.push_back(line);
  return out;
}

// A paragraph wrapped to `w` columns, continuation lines indented by `indent` spaces.
std::string paragraph(const std::string& first_prefix, const std::string& s, std::size_t w, std::size_t indent) {
  if (w == 0 || width(first_prefix) + width(s) <= w) return first_prefix + s + "\n";
  const std::size_t body = w > indent + 20 ? w - std::max(indent, width(first_prefix)) : 20;
  std::string out;
  const auto lines = wrap(s, body);
  for (std::size_t i = 0; i < lines.size(); ++i) out += (i == 0 ? first_prefix : std::string(indent, ' ')) + lines[i] + "\n";
  return out;
}

}  // namespace

std::string render_table(const Table& table, std::size_t max_width) {
  // columns the table marks optional go first when it is too wide, in the order given
  Table t = table;
  std::vector<std::string> hidden;
  auto natural_width = [](const Table& x) {
    std::size_t sum = 0;
    for (std::size_t i = 0; i < x.headers.size(); ++i) {
      std::size_t c = width(x.headers[i]);
      for (const auto& row : x.rows)
        if (i < row.size()) c = std::max(c, width(row[i]));
      sum += c + (i > 0 ? 2 : 0);
    }
    return sum;
  };
  // the original index of every column still shown: headers may repeat ("pred" after each figure),
  // so a dropped column is found by its index, never by its name
  std::vector<std::size_t> shown(table.headers.size());
  for (std::size_t i = 0; i < shown.size(); ++i) shown[i] = i;
  for (const std::size_t drop : table.optional_columns) {
    if (max_width == 0 || natural_width(t) <= max_width) break;
    const auto it = std::find(shown.begin(), shown.end(), drop);
    if (it == shown.end()) continue;
    const auto i = static_cast<std::size_t>(it - shown.begin());
    shown.erase(it);
    hidden.push_back(t.headers[i]);
    t.headers.erase(t.headers.begin() + static_cast<std::ptrdiff_t>(i));
    if (i < t.right_align.size()) t.right_align.erase(t.right_align.begin() + static_cast<std::ptrdiff_t>(i));
    for (auto& row : t.rows)
      if (i < row.size()) row.erase(row.begin() + static_cast<std::ptrdiff_t>(i));
  }
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
  // Too wide for the terminal: narrow the column with the most to give, repeatedly, and wrap its
  // cells (and its header) at spaces. Numbers never wrap: a numeric column narrows only to its
  // widest value (its header wraps); a right-aligned column (figures with units, "19 at 32k") to
  // its widest word, so it wraps at spaces but never cuts a word; a text column to 12 columns.
  auto total = [&] {
    std::size_t sum = n > 0 ? 2 * (n - 1) : 0;
    for (auto x : w) sum += x;
    return sum;
  };
  constexpr std::size_t kMinColumn = 12;
  std::vector<std::size_t> floor_w(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    // numbers keep their width; header words are not cut while a wider column can give
    std::size_t numbers = 0, cell_word = 0;
    auto widest_word = [](const std::string& x) {
      std::size_t most = 0;
      for (std::size_t a = 0, b = 0; a <= x.size(); ++a)
        if (a == x.size() || x[a] == ' ') {
          most = std::max(most, width(x.substr(b, a - b)));
          b = a + 1;
        }
      return most;
    };
    for (const auto& row : t.rows) {
      if (i >= row.size()) continue;
      if ((looks_numeric(row[i]) || row[i] == "-") && row[i].find(' ') == std::string::npos) numbers = std::max(numbers, width(row[i]));
      if (right[i]) cell_word = std::max(cell_word, widest_word(row[i]));
    }
    const std::size_t header_word = widest_word(t.headers[i]);
    floor_w[i] = std::min(w[i], std::max({numbers, header_word, cell_word, right[i] ? std::size_t{1} : kMinColumn}));
  }
  while (max_width > 0 && total() > max_width) {
    std::size_t pick = n;
    for (std::size_t i = 0; i < n; ++i)
      if (w[i] > floor_w[i] && (pick == n || w[i] - floor_w[i] > w[pick] - floor_w[pick])) pick = i;
    if (pick == n) break;  // nothing left to narrow: print as is
    const std::size_t excess = total() - max_width;
    const std::size_t target = std::max(floor_w[pick], w[pick] > excess ? w[pick] - excess : floor_w[pick]);
    // the column is as wide as its wrapped cells need (never more than before)
    std::size_t need = 1;
    for (const auto& l : wrap(t.headers[pick], target)) need = std::max(need, width(l));
    for (const auto& row : t.rows)
      if (pick < row.size())
        for (const auto& l : wrap(row[pick], target)) need = std::max(need, width(l));
    if (need >= w[pick]) {
      floor_w[pick] = w[pick];  // wrapping gains nothing here (one long word): leave it
      continue;
    }
    w[pick] = need;
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::vector<std::vector<std::string>> parts(n);
    std::size_t height = 1;
    for (std::size_t i = 0; i < n; ++i) {
      parts[i] = wrap(i < cells.size() ? cells[i] : "", w[i]);
      height = std::max(height, parts[i].size());
    }
    std::string out;
    for (std::size_t k = 0; k < height; ++k) {
      std::string s;
      for (std::size_t i = 0; i < n; ++i) {
        const std::string c = k < parts[i].size() ? parts[i][k] : "";
        const std::string pad(w[i] - std::min(w[i], width(c)), ' ');
        s += right[i] ? pad + c : c + pad;
        if (i + 1 < n) s += "  ";
      }
      while (!s.empty() && s.back() == ' ') s.pop_back();
      out += s + "\n";
    }
    return out;
  };
  std::string out;
  if (!t.title.empty()) out += paragraph("", t.title, max_width, 2);
  out += line(t.headers);
  std::vector<std::string> rule;
  for (std::size_t i = 0; i < n; ++i) rule.emplace_back(w[i], '-');
  out += line(rule);
  for (const auto& row : t.rows) out += line(row);
  if (!hidden.empty()) out += fmt::format("(not shown at this width: {}; --wide shows every column)\n", fmt::join(hidden, ", "));
  return out;
}

std::string render(const Report& r, Format f, const TextOptions& text) {
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
        out += render_table(r.tables[i], text.width);
      }
      if (!r.notes.empty()) {
        if (!out.empty()) out += "\n";
        for (const auto& n : r.notes) out += paragraph("", n, text.width, 2);
      }
      if (!r.assumptions.empty()) {
        const std::size_t shown = text.all_assumptions ? r.assumptions.size() : std::min(r.assumptions.size(), kAssumptionsShown);
        if (shown == r.assumptions.size())
          out += fmt::format("\nAssumptions (not published figures): {}\n", r.assumptions.size());
        else
          out += fmt::format("\nAssumptions (not published figures): {}, the first {} shown (--assumptions: all)\n",
                             r.assumptions.size(), shown);
        for (std::size_t i = 0; i < shown; ++i) out += paragraph("  * ", r.assumptions[i], text.width, 4);
      }
      return out;
    }
  }
  return {};
}

void make_printable(Report& r) {
  const auto cell = [](std::string& s) { s = sanitize_text(s, true, false); };
  for (auto& t : r.tables) {
    cell(t.title);
    for (auto& h : t.headers) cell(h);
    for (auto& row : t.rows)
      for (auto& c : row) cell(c);
  }
  for (auto& n : r.notes) cell(n);
  for (auto& a : r.assumptions) cell(a);
  cell(r.raw_text);
  sanitize_json(r.data);
}


}  // namespace k3plan
