// weft/weft.hpp — everything an application needs.
#pragma once

#include <weft/compiler_support.hpp>

#include <weft/buggify.hpp>
#include <weft/builtins.hpp>
#include <weft/cancellation.hpp>
#include <weft/event_loop.hpp>
#include <weft/expected.hpp>
#include <weft/join_error.hpp>
#include <weft/join_handle.hpp>
#include <weft/local_domain.hpp>
#include <weft/pinned.hpp>
#include <weft/priority.hpp>
#include <weft/queue_error.hpp>
#include <weft/runtime.hpp>
#include <weft/scheduler.hpp>
#include <weft/stealing_pool.hpp>
#include <weft/stop_outcome.hpp>
#include <weft/task.hpp>
#include <weft/telemetry.hpp>
#include <weft/thread_aware.hpp>
#include <weft/thread_handle.hpp>
#include <weft/time.hpp>
#include <weft/waker.hpp>
