#pragma once
// The HTML report's page around its data (report_html.cpp): the document's head, its style
// sheet, its body and its script, written in this order with the title after the head and the
// data before the script.

#include <string_view>

namespace symtrace::detail {

extern const std::string_view report_page_head;    ///< from <!DOCTYPE html> to the charset
extern const std::string_view report_page_style;   ///< <style>...</style></head>
extern const std::string_view report_page_body;    ///< <body> up to the data's element
extern const std::string_view report_page_script;  ///< the script, </body></html>

}  // namespace symtrace::detail
