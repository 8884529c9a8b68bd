// weft/io.hpp — I/O on the loop that owns the object: sockets, files, descriptors, processes.
#pragma once

#include <weft/compiler_support.hpp>

#include <weft/io/datagram.hpp>
#include <weft/io/file.hpp>
#include <weft/io/process.hpp>
#include <weft/io/readiness.hpp>
#include <weft/io/socket.hpp>
#include <weft/io/socket_address.hpp>
#include <weft/io/stream.hpp>
#include <weft/io/stream_helpers.hpp>
