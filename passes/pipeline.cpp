#include "passes/pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "ir/diagnostic.h"
#include "passes/registry.h"

namespace pb::passes {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

namespace {

std::string option_text(const OptionValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>)
          return x ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::string>)
          return x;
        else
          return fmt::format("{}", x);
      },
      v);
}

std::string nearest(std::string_view word, const std::vector<std::string>& names) {
  std::string best;
  size_t best_d = std::string::npos;
  for (const auto& n : names) {
    size_t d = edit_distance(word, n);
    if (d < best_d) {
      best_d = d;
      best = n;
    }
  }
  return best_d <= std::max<size_t>(2, word.size() / 3) ? best : "";
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out;
}

class PipelineParser {
 public:
  PipelineParser(std::string_view text, std::string source, int depth)
      : text_(text), source_(std::move(source)), depth_(depth) {}

  Pipeline parse() {
    Pipeline p;
    skip_ws();
    if (pos_ == text_.size()) return p;
    for (size_t written = 0;; ++written) {
      size_t first = p.entries.size();
      parse_entry(p);
      for (size_t i = first; i < p.entries.size(); ++i) p.entries[i].group = written;
      skip_ws();
      if (pos_ == text_.size()) break;
      if (text_[pos_] != ',') fail(fmt::format("expected ',' between passes, found '{}'", text_[pos_]));
      ++pos_;
      skip_ws();
      if (pos_ == text_.size()) fail("expected a pass name after ','");
    }
    return p;
  }

 private:
  [[noreturn]] void fail(const std::string& msg, const std::string& remedy = {}) const { fail_at(pos_, msg, remedy); }
  [[noreturn]] void fail_at(size_t pos, const std::string& msg, const std::string& remedy = {}) const {
    Diagnostic d;
    d.file = source_;
    d.line = 1;
    d.column = static_cast<int>(pos) + 1;
    d.message = msg;
    d.source_line = std::string(text_);
    d.remedy = remedy;
    throw UserError(d);
  }
  void skip_ws() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  std::string word() {
    skip_ws();
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
                                   text_[pos_] == '-' || text_[pos_] == '.'))
      ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  // Parses `{a=1,b=x}` against `specs` into `out`, recording explicitly set names.
  void parse_options(const std::string& owner, const std::vector<OptionSpec>& specs, PassOptions& out,
                     std::vector<std::string>& explicit_names) {
    for (const auto& s : specs) out.set(s.name, convert(s, s.default_value, pos_));
    skip_ws();
    if (pos_ >= text_.size() || text_[pos_] != '{') return;
    size_t brace = pos_++;
    skip_ws();
    if (pos_ == text_.size())
      fail_at(brace, fmt::format("the option list of '{}' opened here is not closed", owner),
              fmt::format("close it with '}}' (for example '{}{{}}')", owner));
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return;
    }
    for (;;) {
      size_t name_pos = pos_;
      std::string name = word();
      auto spec = std::find_if(specs.begin(), specs.end(), [&](const OptionSpec& s) { return s.name == name; });
      if (spec == specs.end()) {
        std::vector<std::string> names;
        names.reserve(specs.size());
        for (const auto& s : specs) names.push_back(s.name);
        std::string near = nearest(name, names);
        fail_at(name_pos,
                fmt::format("'{}' has no option '{}'{}", owner, name,
                            near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near)),
                specs.empty() ? fmt::format("'{}' takes no options", owner)
                              : fmt::format("options of '{}': {}", owner, join(names)));
      }
      skip_ws();
      if (pos_ >= text_.size() || text_[pos_] != '=') fail(fmt::format("expected '=' after option '{}'", name));
      ++pos_;
      skip_ws();
      size_t value_pos = pos_;
      while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '}' &&
             !std::isspace(static_cast<unsigned char>(text_[pos_])))
        ++pos_;
      std::string value(text_.substr(value_pos, pos_ - value_pos));
      out.set(name, convert(*spec, value, value_pos));
      if (std::find(explicit_names.begin(), explicit_names.end(), name) == explicit_names.end())
        explicit_names.push_back(name);
      skip_ws();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return;
      }
      if (pos_ == text_.size())
        fail_at(brace, fmt::format("the option list of '{}' opened here is not closed", owner), "close it with '}'");
      fail("expected ',' or '}' in the option list");
    }
  }

  OptionValue convert(const OptionSpec& s, const std::string& v, size_t pos) const {
    auto expects = [&](const char* what) { return fmt::format("option '{}' expects {}, got '{}'", s.name, what, v); };
    switch (s.type) {
      case OptionType::Bool:
        if (v == "true" || v == "1") return true;
        if (v == "false" || v == "0") return false;
        fail_at(pos, expects("true or false"));
      case OptionType::Int: {
        int64_t x = 0;
        auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
        if (ec != std::errc() || p != v.data() + v.size() || v.empty()) fail_at(pos, expects("an integer"));
        if (x < s.min_int || x > s.max_int)
          fail_at(pos, s.max_int == INT64_MAX
                           ? expects(fmt::format("an integer >= {}", s.min_int).c_str())
                           : expects(fmt::format("an integer in {}..{}", s.min_int, s.max_int).c_str()));
        return x;
      }
      case OptionType::Float: {
        double x = 0;
        auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
        if (ec != std::errc() || p != v.data() + v.size() || v.empty()) fail_at(pos, expects("a number"));
        return x;
      }
      case OptionType::String:
        if (!s.choices.empty() && std::find(s.choices.begin(), s.choices.end(), v) == s.choices.end())
          fail_at(pos, fmt::format("option '{}' expects one of {}, got '{}'", s.name, join(s.choices), v));
        return v;
    }
    fail_at(pos, expects("a value"));
  }

  void parse_entry(Pipeline& p) {
    size_t name_pos = pos_;
    std::string name = word();
    if (name.empty()) fail("expected a pass name");
    if (const PassInfo* info = find_pass(name)) {
      PipelineEntry e;
      e.info = info;
      parse_options(name, info->options, e.options, e.explicit_options);
      p.entries.push_back(std::move(e));
      return;
    }
    if (const NamedPipelineInfo* named = find_named_pipeline(name)) {
      if (depth_ > 8) fail_at(name_pos, fmt::format("named pipeline '{}' expands into itself", name));
      PassOptions opts;
      std::vector<std::string> set;
      parse_options(name, named->options, opts, set);
      std::string expansion = named->expand(opts);
      Pipeline inner = PipelineParser(expansion, fmt::format("pipeline '{}'", name), depth_ + 1).parse();
      for (auto& e : inner.entries) p.entries.push_back(std::move(e));
      return;
    }
    std::vector<std::string> names, pipelines;
    for (const auto& i : all_passes()) names.push_back(i.name);
    for (const auto& i : all_named_pipelines()) pipelines.push_back(i.name);
    std::vector<std::string> everything = names;
    everything.insert(everything.end(), pipelines.begin(), pipelines.end());
    std::string near = nearest(name, everything);
    fail_at(name_pos,
            fmt::format("unknown pass '{}'{}", name, near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near)),
            fmt::format("passes: {}{}; `passbench passes` describes them", join(names),
                        pipelines.empty() ? "" : "; pipelines: " + join(pipelines)));
  }

  std::string_view text_;
  std::string source_;
  int depth_;
  size_t pos_ = 0;
};

}  // namespace

std::string PipelineEntry::to_string() const {
  if (explicit_options.empty()) return info->name;
  std::string out = info->name + "{";
  for (size_t i = 0; i < explicit_options.size(); ++i) {
    const auto& n = explicit_options[i];
    out += (i ? "," : "") + n + "=" + option_text(options.values().at(n));
  }
  return out + "}";
}

std::string Pipeline::to_string() const {
  std::string out;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i) out += ',';
    out += entries[i].to_string();
  }
  return out;
}

Pipeline parse_pipeline(std::string_view text, const std::string& source) {
  return PipelineParser(text, source, 0).parse();
}

}  // namespace pb::passes
