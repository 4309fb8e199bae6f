// Runs work on a thread with a large stack. SPIRV-Tools' SSA rewriter and SPIRV-Cross's
// expression emitter recurse once per nested block or chained expression, so the modules of
// reverse kernels with deep loop nests or thousands of pushes overflow the default 8 MiB stack.
// 1 GiB is address space only: pages are touched as the recursion goes. Exceptions thrown by the
// work are rethrown in the caller.
#pragma once

#include <pthread.h>

#include <cstddef>
#include <exception>

namespace pb::codegen {

inline constexpr size_t kLargeStackBytes = size_t{1} << 30;

template <class F>
void on_large_stack(F&& work) {
  struct Context {
    F* work;
    std::exception_ptr error;
  } context{&work, nullptr};
  auto entry = [](void* p) -> void* {
    auto* c = static_cast<Context*>(p);
    try {
      (*c->work)();
    } catch (...) {
      c->error = std::current_exception();
    }
    return nullptr;
  };
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kLargeStackBytes);
  pthread_t thread;
  const bool started = pthread_create(&thread, &attr, entry, &context) == 0;
  pthread_attr_destroy(&attr);
  if (!started) {
    work();  // no thread to be had: run here, with the usual stack
    return;
  }
  pthread_join(thread, nullptr);
  if (context.error) std::rethrow_exception(context.error);
}

}  // namespace pb::codegen
