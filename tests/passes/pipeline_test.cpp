// Pipeline strings: parsing, options, named pipelines, printing back, and every error path.
#include "passes/pipeline.h"

#include <gtest/gtest.h>

#include "ir/diagnostic.h"
#include "passes/registry.h"

using namespace pb::passes;

namespace {

std::string error_of(const std::string& text) {
  try {
    parse_pipeline(text);
  } catch (const pb::UserError& e) {
    return e.what();
  }
  return "";
}

TEST(Pipeline, EmptyTextIsAnEmptyPipeline) { EXPECT_TRUE(parse_pipeline("").entries.empty()); }

TEST(Pipeline, ListOfPasses) {
  auto p = parse_pipeline("simplify,dce, renumber");
  ASSERT_EQ(p.entries.size(), 3u);
  EXPECT_EQ(p.entries[0].info->name, "simplify");
  EXPECT_EQ(p.entries[1].info->name, "dce");
  EXPECT_EQ(p.entries[2].info->name, "renumber");
  EXPECT_EQ(p.to_string(), "simplify,dce,renumber");
}

TEST(Pipeline, OptionsHaveDefaultsAndOverrides) {
  auto p = parse_pipeline("simplify,simplify{max_rounds=3}");
  EXPECT_EQ(p.entries[0].options.get_int("max_rounds"), 16);
  EXPECT_EQ(p.entries[1].options.get_int("max_rounds"), 3);
  EXPECT_EQ(p.to_string(), "simplify,simplify{max_rounds=3}");
  EXPECT_EQ(parse_pipeline(p.to_string()).to_string(), p.to_string());
}

TEST(Pipeline, EmptyBracesAndWhitespace) {
  EXPECT_EQ(parse_pipeline(" simplify{ } , dce ").to_string(), "simplify,dce");
  EXPECT_EQ(parse_pipeline("simplify{ max_rounds = 2 }").to_string(), "simplify{max_rounds=2}");
}

TEST(Pipeline, NamedPipelineExpands) {
  EXPECT_EQ(parse_pipeline("cleanup,renumber").to_string(), "simplify,dce,renumber");
}

TEST(Pipeline, UnknownPassSuggestsTheNearestAndListsAll) {
  auto e = error_of("simplify,dcee");
  EXPECT_NE(e.find("unknown pass 'dcee' (did you mean 'dce'?)"), std::string::npos) << e;
  EXPECT_NE(e.find("--passes:1:10:"), std::string::npos) << e;
  EXPECT_NE(e.find("passes: "), std::string::npos) << e;
  EXPECT_NE(e.find(" dce, demote_atomics, determine_ad_stack_size,"), std::string::npos) << e;  // sorted by name
  EXPECT_NE(e.find("pipelines: cleanup"), std::string::npos) << e;
}

TEST(Pipeline, UnknownPassFarFromEverythingHasNoSuggestion) {
  auto e = error_of("zzzzzzzzzzzzz");
  EXPECT_NE(e.find("unknown pass 'zzzzzzzzzzzzz'"), std::string::npos) << e;
  EXPECT_EQ(e.find("did you mean"), std::string::npos) << e;
}

TEST(Pipeline, UnknownOptionListsTheOptions) {
  auto e = error_of("simplify{max_round=3}");
  EXPECT_NE(e.find("'simplify' has no option 'max_round' (did you mean 'max_rounds'?)"), std::string::npos) << e;
  EXPECT_NE(e.find("options of 'simplify': max_rounds"), std::string::npos) << e;
  e = error_of("dce{x=1}");
  EXPECT_NE(e.find("'dce' takes no options"), std::string::npos) << e;
}

TEST(Pipeline, BadValuesAreRejected) {
  EXPECT_NE(error_of("simplify{max_rounds=many}").find("option 'max_rounds' expects an integer, got 'many'"),
            std::string::npos);
  EXPECT_NE(error_of("simplify{max_rounds=}").find("expects an integer"), std::string::npos);
  EXPECT_NE(error_of("simplify{max_rounds}").find("expected '=' after option 'max_rounds'"), std::string::npos);
}

TEST(Pipeline, SyntaxErrorsAreLocated) {
  EXPECT_NE(error_of("simplify,").find("expected a pass name after ','"), std::string::npos);
  EXPECT_NE(error_of("simplify dce").find("expected ',' between passes"), std::string::npos);
  EXPECT_NE(
      error_of("simplify{max_rounds=2").find("1:9: error: the option list of 'simplify' opened here is not closed"),
      std::string::npos);
  EXPECT_NE(error_of(",dce").find("expected a pass name"), std::string::npos);
  EXPECT_NE(error_of("simplify{max_rounds=2 x}").find("expected ',' or '}'"), std::string::npos);
}

TEST(Pipeline, TypedOptionsOfEveryKind) {
  ScopedRegistry scope(
      {{.name = "test_typed_options",
        .summary = "test only",
        .options = {{.name = "flag", .type = OptionType::Bool, .default_value = "false", .help = "", .choices = {}},
                    {.name = "ratio", .type = OptionType::Float, .default_value = "0.5", .help = "", .choices = {}},
                    {.name = "mode",
                     .type = OptionType::String,
                     .default_value = "heap",
                     .help = "",
                     .choices = {"heap", "function"}}},
        .statistics = {},
        .create = {}}});
  auto p = parse_pipeline("test_typed_options{flag=true,ratio=2.25,mode=function}");
  EXPECT_TRUE(p.entries[0].options.get_bool("flag"));
  EXPECT_DOUBLE_EQ(p.entries[0].options.get_float("ratio"), 2.25);
  EXPECT_EQ(p.entries[0].options.get_string("mode"), "function");
  EXPECT_EQ(p.to_string(), "test_typed_options{flag=true,ratio=2.25,mode=function}");
  EXPECT_NE(error_of("test_typed_options{flag=yes}").find("expects true or false"), std::string::npos);
  EXPECT_NE(error_of("test_typed_options{mode=stack}").find("expects one of heap, function, got 'stack'"),
            std::string::npos);
  EXPECT_NE(error_of("test_typed_options{ratio=1.5x}").find("expects a number"), std::string::npos);
}

TEST(Pipeline, SelfExpandingNamedPipelineIsAnError) {
  ScopedRegistry scope({},
                       {{.name = "test_loop", .summary = "test only", .options = {}, .expand = [](const PassOptions&) {
                           return std::string("test_loop");
                         }}});
  EXPECT_NE(error_of("test_loop").find("expands into itself"), std::string::npos);
}

// A parsed pipeline keeps pointers to its passes' declarations: a registration after parsing (a
// scope of many more passes) must leave them where they are, and a scope's passes vanish with it.
TEST(Registry, ParsedPipelinesSurviveLaterRegistrations) {
  const size_t builtin = all_passes().size();
  ScopedRegistry early({{.name = "test_early", .summary = "test only", .options = {}, .statistics = {}, .create = {}}});
  Pipeline p = parse_pipeline("dce,test_early,reverse_ad{use_stack=false},simplify");
  std::vector<const PassInfo*> infos;
  infos.reserve(p.entries.size());
  for (const PipelineEntry& e : p.entries) infos.push_back(e.info);
  {
    std::vector<PassInfo> many;
    many.reserve(100);
    for (int i = 0; i < 100; ++i)
      many.push_back({.name = "test_late_" + std::to_string(i),
                      .summary = "test only",
                      .options = {},
                      .statistics = {},
                      .create = {}});
    ScopedRegistry late(std::move(many));
    ASSERT_NE(find_pass("test_late_99"), nullptr);
    for (size_t i = 0; i < p.entries.size(); ++i) EXPECT_EQ(find_pass(p.entries[i].info->name), infos[i]) << i;
    EXPECT_EQ(p.to_string(), parse_pipeline(p.to_string()).to_string());
  }
  EXPECT_EQ(find_pass("test_late_0"), nullptr);
  EXPECT_EQ(find_pass("test_early"), infos[1]);
  EXPECT_EQ(all_passes().size(), builtin);  // scopes never touch the built-in set
  EXPECT_EQ(p.entries.front().info->name, "dce");
}

TEST(Pipeline, EditDistance) {
  EXPECT_EQ(edit_distance("dce", "dce"), 0u);
  EXPECT_EQ(edit_distance("dcee", "dce"), 1u);
  EXPECT_EQ(edit_distance("simplfy", "simplify"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
}

}  // namespace
