// passbench-gui: the workbench window (Dear ImGui on GLFW + OpenGL 3). With --screenshot it runs
// headless-friendly: opens the window, loads, computes what the chosen panel shows, renders a few
// frames, writes the framebuffer as a PNG and exits. docs/workbench.md describes the panels.
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <vector>

#include "workbench/gui/app.h"
#include "workbench/gui/config.h"
#include "workbench/gui/screenshot.h"

using namespace pb;
using namespace pb::workbench::gui;

namespace {

struct Arguments {
  std::string load, dump, passes, panel, screenshot, fixtures, loss, backends = "cpu,vulkan", save_fixture;
  int select_pass = 0, frames = 3, width = 1400, height = 860;
  uint32_t max_id_bound = 0;
  bool measure_passes = false;
  bool reverse = false;
  std::vector<float> mouse;  // x, y: where the mouse is for every frame (screenshots of hover states)
};

void on_drop(GLFWwindow* window, int count, const char** paths) {
  auto* app = static_cast<App*>(glfwGetWindowUserPointer(window));
  if (count > 0) app->open(paths[0]);
}

int run(const Arguments& args) {
  glfwSetErrorCallback(
      [](int code, const char* text) { std::fprintf(stderr, "passbench-gui: GLFW error %d: %s\n", code, text); });
  if (!glfwInit()) {
    std::cerr << "passbench-gui: cannot open a window (no display?). Set DISPLAY, or run under xvfb-run for "
                 "--screenshot.\n";
    return 2;
  }
  GuiConfig config = load_config();
  bool headless = !args.screenshot.empty();
  int width = headless ? args.width : config.width, height = headless ? args.height : config.height;
  GLFWwindow* window = glfwCreateWindow(width, height, "passbench-gui", nullptr, nullptr);
  if (!window) {
    glfwTerminate();
    std::cerr << "passbench-gui: cannot create an OpenGL 3 window; under Xvfb install libgl1-mesa-dri "
                 "(scripts/install-deps.sh)\n";
    return 2;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(headless ? 0 : 1);
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  std::string ini = config_dir() + "/imgui.ini";
  ImGui::GetIO().IniFilename = headless ? nullptr : ini.c_str();
  ImGui::StyleColorsDark();
  ImGui::GetStyle().FrameRounding = 2;
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 130");

  auto app = std::make_unique<App>();
  glfwSetWindowUserPointer(window, app.get());
  glfwSetDropCallback(window, on_drop);
  std::string load = !args.load.empty() ? args.load : headless ? "" : config.last_file;
  if (!load.empty()) {
    app->open(load, load == args.load ? args.dump : "");
    if (headless && !app->ws.kernel() && !app->ws.source_error()) {
      std::cerr << "passbench-gui: " << app->message << "\n";
      return 2;
    }
  }
  if (!args.passes.empty()) app->ws.set_pipeline(args.passes);
  if (args.max_id_bound || args.measure_passes) {
    auto settings = app->ws.compile_settings();
    if (args.max_id_bound) settings.max_id_bound = args.max_id_bound;
    settings.measure_passes = args.measure_passes;
    app->ws.set_compile_settings(settings);
  }
  app->run.reverse = args.reverse;
  app->run.on_cpu = args.backends.find("cpu") != std::string::npos;
  app->run.on_vulkan = args.backends.find("vulkan") != std::string::npos;
  if (!args.loss.empty()) {
    auto losses = app->ws.loss_candidates();
    for (size_t i = 0; i < losses.size(); ++i)
      if (losses[i] == args.loss) app->run.loss = static_cast<int>(i);
  }
  std::optional<PanelId> panel = args.panel.empty() ? std::nullopt : panel_from_name(args.panel);
  if (!args.panel.empty() && !panel) {
    std::cerr << "passbench-gui: --panel " << args.panel
              << ": unknown panel; one of source, pipeline, timeline, bisect, spirv, msl, run, fixtures\n";
    return 2;
  }
  app->select = panel;
  if (!args.fixtures.empty()) app->fixtures.run_folder(args.fixtures);
  if (!args.save_fixture.empty()) {
    app->fixtures.save_path = args.save_fixture;
    app->fixtures.save_requested = true;
  }
  if (args.select_pass > 0) app->timeline.selected = args.select_pass - 1;
  if (headless) app->fixtures.worker.wait();

  // Headless runs go through the same path as a user: visible panels ask the worker for what they
  // show; the screenshot is taken `frames` frames after the last job ended.
  int quiet_frames = 0;
  int status = 0;
  while (!glfwWindowShouldClose(window)) {
    if (headless)
      glfwPollEvents();
    else
      glfwWaitEventsTimeout(app->worker.busy() || app->fixtures.worker.busy() ? 0.05 : 0.5);
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    if (args.mouse.size() == 2) ImGui::GetIO().MousePos = ImVec2(args.mouse[0], args.mouse[1]);
    ImGui::NewFrame();
    app->frame();
    ImGui::Render();
    int fb_width, fb_height;
    glfwGetFramebufferSize(window, &fb_width, &fb_height);
    glViewport(0, 0, fb_width, fb_height);
    glClearColor(0.1f, 0.1f, 0.12f, 1);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    const bool busy = app->worker.busy() || app->fixtures.worker.busy() || app->fixtures.save_requested;
    quiet_frames = busy ? 0 : quiet_frames + 1;
    if (headless && quiet_frames >= std::max(2, args.frames)) {
      std::string error = write_framebuffer_png(args.screenshot, fb_width, fb_height);
      if (!error.empty()) std::cerr << "passbench-gui: " << error << "\n", status = 1;
      break;
    }
    glfwSwapBuffers(window);
  }
  if (!headless) {
    glfwGetWindowSize(window, &config.width, &config.height);
    config.last_file = app->last_file.empty() ? config.last_file : app->last_file;
    save_config(config);
  }
  app->worker.cancel();
  app->fixtures.worker.cancel();
  app.reset();
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return status;
}

}  // namespace

// The function-try-block catches what building the command line may throw: nothing escapes main.
int main(int argc, char** argv) try {
  CLI::App cli{"passbench-gui: the pass workbench (docs/workbench.md)"};
  Arguments args;
  cli.add_option("--load", args.load, "kernel, dump, JSON or fixture to open (default: the last one opened)");
  cli.add_option("--dump", args.dump, "which dump of a log holding several: N or a title (default: the last)");
  cli.add_option("--passes", args.passes, "pipeline, e.g. simplify,dce or reverse_ad (default: the fixture's)");
  cli.add_option("--select-pass", args.select_pass, "select pass N (1-based) in the Pass timeline");
  cli.add_option("--panel", args.panel,
                 "bring a panel forward: source pipeline timeline bisect spirv msl run fixtures");
  cli.add_option("--screenshot", args.screenshot, "render, write the window as a PNG to this file and exit");
  cli.add_option("--frames", args.frames, "frames to render before the screenshot (default 3)");
  cli.add_option("--fixtures", args.fixtures, "run the fixtures of this folder in the Fixtures panel");
  cli.add_option("--max-id-bound", args.max_id_bound, "SPIR-V optimizer ID bound (default 67108863)");
  cli.add_flag("--measure-passes", args.measure_passes, "SPIR-V panel: the per-pass chart (each pass's ID need)");
  cli.add_flag("--reverse", args.reverse, "Run panel: forward + reverse with a gradient check");
  cli.add_option("--save-fixture", args.save_fixture,
                 "Fixtures panel: save the loaded kernel, pipeline and inputs as this new fixture (gradients of the "
                 "suggested loss included), as the panel's Save button does");
  cli.add_option("--backends", args.backends, "Run panel: the backends compared with the interpreter")
      ->check(CLI::IsMember({"cpu,vulkan", "vulkan,cpu", "cpu", "vulkan", "none"}))
      ->capture_default_str();
  cli.add_option("--loss", args.loss, "Run panel: the loss field of the gradient check");
  cli.add_option("--mouse", args.mouse, "X Y: keep the mouse there (hover states in screenshots)")->expected(2);
  cli.add_option("--width", args.width, "screenshot width (default 1400)");
  cli.add_option("--height", args.height, "screenshot height (default 860)");
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli.exit(e) == 0 ? 0 : 2;
  }
  return run(args);
} catch (const std::exception& e) {
  std::cerr << "passbench-gui: internal error: " << e.what() << "\n";
  return 3;
}
