// The catalogue compiled at build time (src/catalogue/compiled.hpp): what the binary carries is
// what the YAML readers produce from data/ now, byte for byte and value for value. (The start-up
// time it buys is measured in bench/startup_bench.cpp, not here.)
#include <array>
#include <catch2/catch.hpp>
#include <k3plan/catalogue.hpp>
#include <k3plan/compiled.hpp>
#include <k3plan/embedded.hpp>
#include <k3plan/engine.hpp>
#include <k3plan/engine_flags.hpp>
#include <k3plan/error.hpp>
#include <k3plan/version.hpp>
#include <set>
#include <unordered_map>

using namespace k3plan;

namespace {

// every loader that reads through the compiled form, once
void load_everything() {
  (void)Catalogue::embedded();
  for (Engine e : kEngines) {
    (void)engine_versions(e);
    (void)flag_table(e);
    (void)accuracy_band(e, "main", "mla");
  }
  (void)version_text();
}

std::string_view embedded_text(const std::string& path) {
  for (const auto& f : embedded_files())
    if (path == f.path) return f.text;
  FAIL("not embedded: " << path);
  return {};
}

}  // namespace

TEST_CASE("every compiled entry equals what its YAML reader returns from the embedded data") {
  load_everything();
  const auto sources = compiled::sources();
  std::set<std::string> keys;
  for (const auto& s : sources) {
    INFO(s.key);
    keys.insert(s.key);
    const auto stored = compiled::find(s.key);
    REQUIRE(stored.has_value());  // the binary carries it: no loader falls back to YAML
    CHECK(s.read_serialised() == std::string(*stored));
  }
  std::set<std::string> stored_keys;
  for (const auto& e : compiled::entries()) stored_keys.insert(e.key);
  CHECK(keys == stored_keys);  // no stale entry, none missing
  for (const char* k : {"catalogue", "engines/sglang", "engines/vllm", "engines/sglang-flags", "engines/vllm-flags",
                        "validation/log-accuracy", "catalogue_date"})
    CHECK(keys.count(k) == 1);
}

TEST_CASE("the compiled catalogue holds the models the model reader makes of each data file") {
  const Catalogue c = Catalogue::embedded();
  std::size_t files = 0;
  for (const auto& f : embedded_files()) {
    const std::string path = f.path;
    if (path.rfind("models/", 0) != 0) continue;
    ++files;
    const Model yaml = parse_model_yaml(std::string(f.text), "data/" + path);
    INFO(path);
    const Model* compiled = c.find_model(yaml.id);
    REQUIRE(compiled != nullptr);
    CHECK(compiled->hidden_size == yaml.hidden_size);
    CHECK(compiled->layers == yaml.layers);
    CHECK(compiled->blocks.size() == yaml.blocks.size());
    CHECK(compiled->assumptions.size() == yaml.assumptions.size());
    CHECK(compiled->moe.has_value() == yaml.moe.has_value());
    CHECK(compiled->origin == yaml.origin);
    CHECK(compiled::serialise(*compiled) == compiled::serialise(yaml));  // every member
  }
  CHECK(files > 10);
  // the GPU list keeps the file's order and every figure
  Catalogue gpus_only;
  gpus_only.add_text(std::string(embedded_text("gpus.yaml")), "data/gpus.yaml");
  REQUIRE(c.gpus().size() == gpus_only.gpus().size());
  for (std::size_t i = 0; i < c.gpus().size(); ++i) {
    CHECK(c.gpus()[i].id == gpus_only.gpus()[i].id);
    CHECK(c.gpus()[i].hbm_gb.value == gpus_only.gpus()[i].hbm_gb.value);
    CHECK(compiled::serialise(c.gpus()[i]) == compiled::serialise(gpus_only.gpus()[i]));
  }
}

TEST_CASE("user data files are still read as YAML on top of the compiled catalogue") {
  Catalogue c = Catalogue::embedded();
  const std::size_t before = c.models().size();
  std::string text(embedded_text("models/llama-3.1-8b.yaml"));
  const auto id = text.find("id: llama-3.1-8b\n");
  REQUIRE(id == 0);
  text.replace(0, 16, "id: my-llama-8b");
  const auto aliases = text.find("\naliases:");
  REQUIRE(aliases != std::string::npos);
  text.erase(aliases, text.find('\n', aliases + 1) - aliases);
  CHECK_THROWS_AS(c.add_text(text + "bogus_key: 1\n", "mine.yaml"), InputError);  // the reader's own key check
  c.add_text(text, "mine.yaml");
  CHECK(c.models().size() == before + 1);
  CHECK(c.model("my-llama-8b").origin == "mine.yaml");
  CHECK(c.model("my-llama-8b").hidden_size == c.model("llama-3.1-8b").hidden_size);
}

namespace {
enum class Colour { red, green };
struct Inner {
  std::string name;
  std::optional<double> figure;
};
struct Outer {
  int n = 0;
  Colour colour = Colour::red;
  std::vector<Inner> inner;
  std::map<Colour, std::string> by_colour;
  std::set<std::string> names;
  std::unordered_map<std::string, std::vector<std::size_t>> index;
  std::optional<Inner> maybe;
  bool flag = false;
  std::array<Inner, 2> fixed;
};
}  // namespace

TEST_CASE("the compiled form walks aggregates member by member and reads back what it wrote") {
  STATIC_REQUIRE(compiled::detail::member_count<Outer>() == 9);
  STATIC_REQUIRE(compiled::detail::member_count<Model>() == std::tuple_size_v<decltype(compiled::members(std::declval<Model&>()))>);
  Outer o;
  o.n = -7;
  o.colour = Colour::green;
  o.inner = {{"a", 1.5}, {"b", std::nullopt}};
  o.by_colour = {{Colour::green, "g"}, {Colour::red, "r"}};
  o.names = {"x", "y"};
  o.index = {{"k", {1, 2}}, {"j", {}}, {"i", {3}}};
  o.maybe = Inner{"m", 2.0};
  o.flag = true;
  o.fixed[1].name = "second";
  const std::string bytes = compiled::serialise(o);
  Outer back;
  compiled::deserialise(bytes, back);
  CHECK(back.n == -7);
  CHECK(back.colour == Colour::green);
  REQUIRE(back.inner.size() == 2);
  CHECK(back.inner[0].figure == 1.5);
  CHECK_FALSE(back.inner[1].figure.has_value());
  CHECK(back.by_colour == o.by_colour);
  CHECK(back.names == o.names);
  CHECK(back.index == o.index);
  CHECK(back.maybe->name == "m");
  CHECK(back.flag);
  CHECK(back.fixed[1].name == "second");
  CHECK(compiled::serialise(back) == bytes);
  CHECK_THROWS(compiled::deserialise(bytes.substr(0, bytes.size() - 1), back));  // truncated
  CHECK_THROWS(compiled::deserialise(bytes + "x", back));                        // trailing
}

TEST_CASE("the version text names the release and the commit and the catalogue date") {
  const std::string v = version_text();
  CHECK(v.rfind(std::string("k3plan ") + build_version() + "\n", 0) == 0);
  CHECK(v.find(std::string("\ncommit ") + build_commit()) != std::string::npos);
  const Catalogue c = Catalogue::embedded();
  const std::string date = catalogue_date(c);
  REQUIRE(date.size() >= 7);
  CHECK(v.find("\ncatalogue " + date + " ") != std::string::npos);
  // no model, price or engine window is dated later, and one is dated exactly so
  bool found = false;
  auto see = [&](const std::string& d) {
    if (d.size() >= 7 && d[4] == '-') {
      CHECK(d <= date);
      found = found || d == date;
    }
  };
  for (const auto& m : c.models()) see(m.date);
  for (const auto& q : c.prices().rental) see(q.date);
  for (const auto& q : c.prices().api) see(q.date);
  for (const auto& g : c.gpus()) see(g.price_date);
  for (Engine e : kEngines)
    for (const auto& ev : engine_versions(e)) see(ev.date);
  CHECK(found);
}
