// coroutine_temporaries.cpp — configure-time probe: does this compiler destroy each temporary of a
// `co_await` full-expression exactly once?
//
// g++ 12 does not: an aggregate temporary with a non-trivial member in the full-expression of a
// `co_await` (`co_await leaf{ptr}`, `co_await send(message{...})`) has that member destroyed twice,
// whether the coroutine resumes, throws or is destroyed while suspended. weft's build refuses such
// a compiler (meson.build runs this program); docs/decisions.md says why. Exit 0: sound; 1: defect.
#include <coroutine>
#include <cstdio>
#include <exception>

namespace {

int constructed = 0;
int destroyed = 0;

struct counted {
  counted() { ++constructed; }
  counted(const counted&) { ++constructed; }
  counted& operator=(const counted&) = default;
  ~counted() { ++destroyed; }
};

struct cancelled {};

struct probe_task {
  struct promise_type {
    probe_task get_return_object() { return {std::coroutine_handle<promise_type>::from_promise(*this)}; }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    void return_void() {}
    void unhandled_exception() {}
  };
  std::coroutine_handle<promise_type> handle;
};

bool throw_on_resume = false;

// The pattern users write: an aggregate awaitable built in the co_await operand.
struct aggregate_leaf {
  counted member;
  bool await_ready() { return false; }
  void await_suspend(std::coroutine_handle<>) {}
  void await_resume() {
    if (throw_on_resume) throw cancelled{};
  }
};

probe_task awaits_aggregate() { co_await aggregate_leaf{counted{}}; }

enum class path { resume, destroy_suspended, throw_on_resume };

bool destroys_once(path p) {
  constructed = destroyed = 0;
  throw_on_resume = p == path::throw_on_resume;
  probe_task t = awaits_aggregate();
  t.handle.resume();  // runs to the co_await and suspends there
  if (p != path::destroy_suspended) t.handle.resume();  // completes, normally or by the exception
  t.handle.destroy();
  return constructed == destroyed;
}

}  // namespace

int main() {
  const struct {
    path p;
    const char* name;
  } paths[] = {{path::resume, "resumed"},
               {path::destroy_suspended, "destroyed while suspended"},
               {path::throw_on_resume, "unwound by an exception"}};
  int failures = 0;
  for (const auto& c : paths) {
    if (!destroys_once(c.p)) {
      std::printf("co_await temporary destroyed %d times for %d constructions (%s)\n", destroyed,
                  constructed, c.name);
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}
