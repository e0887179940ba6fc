#pragma once
/// \file
/// The `export` layer in one include.

#include "symtrace/export/graph_json.hpp"
#include "symtrace/export/report_json.hpp"
#include "symtrace/export/onnx.hpp"
#include "symtrace/export/graphviz.hpp"
#include "symtrace/export/report_html.hpp"
