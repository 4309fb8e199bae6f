// passbench-gui end to end: each panel rendered headless (under xvfb-run with Mesa's software
// OpenGL; CTest starts it so) from a bundled kernel, the PNG read back and its structure checked
// by the colours the panels draw (workbench/gui/diff_colors.h, chart.h).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>

namespace fs = std::filesystem;

namespace {

const std::string kSource = PASSBENCH_SOURCE_DIR;

struct Rgb {
  int r, g, b;
};
constexpr Rgb kRemoved{125, 38, 38}, kAdded{34, 105, 44}, kThreshold{255, 140, 0}, kIdSeries{80, 170, 255},
    kBars{230, 120, 230}, kErrorLine{120, 35, 35}, kRedRow{110, 30, 30}, kGreenText{128, 230, 128},
    kRedText{255, 115, 115}, kButton{36, 70, 110}, kChartBackground{28, 28, 34};

struct Image {
  int width = 0, height = 0;
  std::vector<unsigned char> pixels;
  bool is(int x, int y, Rgb c, int tolerance = 2) const {
    const unsigned char* p = &pixels[(static_cast<size_t>(y) * width + x) * 3];
    return std::abs(p[0] - c.r) <= tolerance && std::abs(p[1] - c.g) <= tolerance && std::abs(p[2] - c.b) <= tolerance;
  }
  // Pixels of colour c in [x0, x1) x [y0, y1).
  size_t count(Rgb c, int x0 = 0, int y0 = 0, int x1 = -1, int y1 = -1) const {
    if (x1 < 0) x1 = width;
    if (y1 < 0) y1 = height;
    size_t n = 0;
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) n += is(x, y, c);
    return n;
  }
};

fs::path out_dir() {
  fs::path d = fs::temp_directory_path() / ("passbench_gui_test_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

// Runs passbench-gui with `args` and reads the screenshot back.
Image screenshot(const std::string& name, const std::string& args) {
  fs::path png = out_dir() / (name + ".png");
  std::string cmd = std::string("PASSBENCH_GUI_CONFIG_DIR=") + (out_dir() / "config").string() + " " + PASSBENCH_GUI +
                    " " + args + " --screenshot " + png.string() + " 2>&1";
  int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << cmd;
  Image img;
  int channels = 0;
  unsigned char* data = stbi_load(png.string().c_str(), &img.width, &img.height, &channels, 3);
  if (!data) {
    ADD_FAILURE() << "no PNG from: " << cmd;
    return img;
  }
  img.pixels.assign(data, data + static_cast<size_t>(img.width) * img.height * 3);
  stbi_image_free(data);
  EXPECT_EQ(img.width, 1400);
  EXPECT_EQ(img.height, 860);
  return img;
}

// The row (y) in the right half holding the most pixels of colour c.
int densest_row(const Image& img, Rgb c) {
  int best = -1;
  size_t most = 0;
  for (int y = 0; y < img.height; ++y) {
    size_t n = img.count(c, img.width / 3, y, img.width, y + 1);
    if (n > most) most = n, best = y;
  }
  return best;
}

// The top of the first chart: the first row whose right part is mostly chart background.
int chart_top(const Image& img) {
  for (int y = 0; y < img.height; ++y)
    if (img.count(kChartBackground, img.width / 3, y, img.width, y + 1) > static_cast<size_t>(img.width) / 3) return y;
  return -1;
}

// Separate runs of colour c along row y (bars, buttons).
int runs_in_row(const Image& img, Rgb c, int y, int x0, int x1) {
  int runs = 0;
  bool inside = false;
  for (int x = x0; x < x1; ++x) {
    bool hit = img.is(x, y, c);
    runs += hit && !inside;
    inside = hit;
  }
  return runs;
}
int runs_in_column(const Image& img, Rgb c, int x, int y0, int y1) {
  int runs = 0;
  bool inside = false;
  for (int y = y0; y < y1; ++y) {
    bool hit = img.is(x, y, c);
    runs += hit && !inside;
    inside = hit;
  }
  return runs;
}

const std::string kDemo = kSource + "/fixtures/dumps/quadrants_issue_example.chi";

// The screenshots go to a temporary folder removed after the run.
class RemoveOutputs : public ::testing::Environment {
 public:
  void TearDown() override { fs::remove_all(out_dir()); }
};
const auto* const kRemoveOutputs = ::testing::AddGlobalTestEnvironment(new RemoveOutputs);

}  // namespace

TEST(GuiScreenshot, TimelineDiffShowsRemovedAndAddedLines) {
  Image img =
      screenshot("timeline", "--load " + kDemo + " --passes=simplify,dce,renumber --select-pass 1 --panel timeline");
  EXPECT_GT(img.count(kRemoved, img.width / 3), 500u);
  EXPECT_GT(img.count(kAdded, img.width / 3), 500u);
  // renumber only renames: its diff has both colours too; an unchanged pass has neither.
  Image none =
      screenshot("timeline_unchanged", "--load " + kDemo + " --passes=dce,dce --select-pass 2 --panel timeline");
  EXPECT_EQ(none.count(kRemoved, none.width / 3), 0u);
  EXPECT_EQ(none.count(kAdded, none.width / 3), 0u);
}

TEST(GuiScreenshot, HoveringAValueTintsItsDefinitionAndUses) {
  // The mouse on the `$9` of simplify's diff line `$11 : local store [$10 <- $9]`: its definition
  // line is tinted on both sides, and so are its uses.
  const std::string args = "--load " + kDemo + " --passes=simplify,dce,renumber --select-pass 1 --panel timeline";
  constexpr Rgb kDefinition{39, 61, 104}, kUse{28, 39, 60};
  Image img = screenshot("hover", args + " --mouse 833 214");
  EXPECT_GT(img.count(kDefinition, img.width / 3), 1000u);  // two half-width rows
  EXPECT_GT(img.count(kUse, img.width / 3), 1000u);
  Image away = screenshot("no_hover", args + " --mouse 5 5");
  // (a few anti-aliased text pixels elsewhere share these colours)
  EXPECT_LT(away.count(kDefinition, away.width / 3), 100u);
  EXPECT_LT(away.count(kUse, away.width / 3), 100u);
}

TEST(GuiScreenshot, SpirvChartCrossesAScaledBound) {
  // The emitter's module needs 138 IDs and LocalMultiStoreElim more: under 139 the optimizer stops
  // and the chart's ID series rises above the bound line.
  Image over = screenshot("spirv_overflow", "--load " + kDemo + " --panel spirv --measure-passes --max-id-bound 139");
  int line = densest_row(over, kThreshold);
  ASSERT_GT(line, 0);
  EXPECT_GT(over.count(kThreshold, over.width / 3, line, over.width, line + 1), 300u);
  // Above the line, below the legend (which sits in the chart's top margin).
  int top = chart_top(over);
  ASSERT_GT(top, 0);
  ASSERT_LT(top + 20, line);
  EXPECT_GT(over.count(kIdSeries, over.width / 3, top + 20, over.width, line - 3), 5u);
  EXPECT_GT(over.count(kIdSeries, over.width / 3, line + 2, over.width, over.height), 10u);
  // Under the default bound the series stays below the line.
  Image fits = screenshot("spirv", "--load " + kDemo + " --panel spirv --measure-passes");
  int default_line = densest_row(fits, kThreshold);
  ASSERT_GT(default_line, 0);
  int fits_top = chart_top(fits);
  ASSERT_GT(fits_top, 0);
  EXPECT_EQ(fits.count(kIdSeries, fits.width / 3, fits_top + 20, fits.width, default_line - 3), 0u);
  EXPECT_GT(fits.count(kIdSeries, fits.width / 3, default_line + 2, fits.width, fits.height), 50u);
}

TEST(GuiScreenshot, MslChartHasOneBarPerLowering) {
  Image img = screenshot("msl", "--load " + kDemo + " --panel msl");
  int row = densest_row(img, kBars);
  ASSERT_GT(row, 0);
  EXPECT_EQ(runs_in_row(img, kBars, row, img.width / 3, img.width), 16);  // 2 x 2 x 2 x 2 lowerings
}

TEST(GuiScreenshot, SourceShowsAParseErrorAtItsLine) {
  fs::path bad = out_dir() / "bad.chi";
  std::ifstream in(kDemo);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  text.replace(text.find("sin $7"), 6, "sin $99");
  std::ofstream(bad) << text;
  Image img = screenshot("source_error", "--load " + bad.string() + " --panel source");
  EXPECT_GT(img.count(kErrorLine, 0, 0, img.width / 2), 1000u);
  EXPECT_GT(img.count(kRedText), 100u);
  Image good = screenshot("source", "--load " + kDemo + " --panel source");
  EXPECT_EQ(good.count(kErrorLine, 0, 0, good.width / 2), 0u);
}

TEST(GuiScreenshot, PipelineListsOneRowPerPass) {
  Image img = screenshot("pipeline", "--load " + kDemo + " --passes=simplify,dce,renumber --panel pipeline");
  // One remove button per pass, and the Run pipeline button under the list.
  EXPECT_EQ(runs_in_column(img, kButton, 18, 60, img.height - 40), 3 + 1);  // x = 18: left of the arrow glyphs
}

TEST(GuiScreenshot, RunShowsGradientsMatchingFiniteDifferences) {
  Image img =
      screenshot("run", "--load " + kSource + "/fixtures/autodiff/binary_mul_f32.fixture.json --panel run --reverse");
  EXPECT_GT(img.count(kGreenText, img.width / 3), 100u);  // the verdict line
  EXPECT_EQ(img.count(kRedRow, img.width / 3), 0u);       // no mismatch rows
}

TEST(GuiScreenshot, BisectMarksThePassThatChangedTheAnswer) {
  // make_adjoint drops the forward kernel's stores (a reverse kernel writes gradients): the
  // bisection marks it; simplify,dce,renumber keep the answer and nothing is marked.
  Image img =
      screenshot("bisect", "--load " + kSource + "/fixtures/autodiff/binary_mul_f32.fixture.json --panel bisect");
  EXPECT_GT(img.count(kRedRow, img.width / 3), 5000u);
  Image clean = screenshot("bisect_clean", "--load " + kDemo + " --passes=simplify,dce,renumber --panel bisect");
  EXPECT_EQ(clean.count(kRedRow, clean.width / 3), 0u);
  EXPECT_GT(clean.count(kGreenText, clean.width / 3), 100u);
}

TEST(GuiScreenshot, FixturesListsPassAndFailWithTheDiff) {
  fs::path dir = out_dir() / "fixtures";
  fs::create_directories(dir);
  for (const char* name : {"dce_dead_arithmetic_chain", "dce_keeps_global_store"}) {
    fs::copy_file(kSource + "/fixtures/passes/" + name + ".chi", dir / (std::string(name) + ".chi"),
                  fs::copy_options::overwrite_existing);
    fs::copy_file(kSource + "/fixtures/passes/" + name + ".fixture.json", dir / (std::string(name) + ".fixture.json"),
                  fs::copy_options::overwrite_existing);
  }
  // Break one expectation: the fixture fails with an IR diff.
  fs::path broken = dir / "dce_keeps_global_store.fixture.json";
  auto fx = nlohmann::json::parse(std::ifstream(broken));
  ASSERT_TRUE(fx["expect"].contains("ir")) << fx.dump();
  auto& ir = fx["expect"]["ir"];
  ir[ir.size() - 2] = "  $999 : global store [$1 <- $2]";
  std::ofstream(broken) << fx.dump(2);
  Image img = screenshot("fixtures", "--load " + kDemo + " --fixtures " + dir.string() + " --panel fixtures");
  EXPECT_GT(img.count(kGreenText, img.width / 3), 50u);  // PASS
  EXPECT_GT(img.count(kRedText, img.width / 3), 50u);    // FAIL
  EXPECT_GT(img.count(kRemoved, img.width / 3), 200u);   // the failing one's diff
  EXPECT_GT(img.count(kAdded, img.width / 3), 200u);
}

TEST(GuiScreenshot, RunComparesTheBackendsWithTheInterpreter) {
  const std::string load = "--load " + kSource + "/fixtures/autodiff/binary_mul_f32.fixture.json --panel run --reverse";
  Image alone = screenshot("run_alone", load + " --backends none");
  Image compared = screenshot("run_backends", load);
  // The backends' verdict line is green too, and no row is red.
  EXPECT_GT(compared.count(kGreenText, compared.width / 3), alone.count(kGreenText, alone.width / 3) + 100);
  EXPECT_EQ(compared.count(kRedRow, compared.width / 3), 0u);
}

TEST(GuiScreenshot, RunShowsABackendThatCannotRunTheKernelInRed) {
  // A return inside a parallel loop runs on the interpreter and the CPU; SPIR-V codegen refuses it.
  const std::string kernel = kSource + "/tests/workbench/parallel_return.chi";
  Image img = screenshot("run_refused", "--load " + kernel + " --panel run");
  EXPECT_GT(img.count(kRedRow, img.width / 3), 1000u);
  EXPECT_GT(img.count(kRedText, img.width / 3), 100u);
  Image cpu_only = screenshot("run_cpu_only", "--load " + kernel + " --panel run --backends cpu");
  EXPECT_EQ(cpu_only.count(kRedRow, cpu_only.width / 3), 0u);
}

TEST(GuiScreenshot, FixturesSavesTheWorkspaceAsAPassingFixture) {
  fs::path dir = out_dir() / "saved";
  fs::create_directories(dir);
  fs::path saved = dir / "binary_mul_saved.fixture.json";
  Image img =
      screenshot("fixtures_saved", "--load " + kSource + "/fixtures/autodiff/binary_mul_f32.fixture.json --fixtures " +
                                       dir.string() + " --save-fixture " + saved.string() + " --panel fixtures");
  ASSERT_TRUE(fs::exists(saved));
  auto fx = nlohmann::json::parse(std::ifstream(saved));
  EXPECT_EQ(fx["gradcheck"]["loss"], "y");
  EXPECT_TRUE(fx["expect"]["values"]["fields"]["a"].contains("grad")) << fx.dump();
  EXPECT_GT(img.count(kGreenText, img.width / 3), 400u);   // "saved ...: it passes", and PASS in the list
  EXPECT_EQ(img.count(kRedText, img.width / 3, 135), 0u);  // no FAIL in the list (below the red "0 failed")
}
