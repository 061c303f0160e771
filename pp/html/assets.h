/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The HTML report's script and style sheet (pp/html/report.js, report.css),
 * embedded at build time by pp/html/embed.sh into pp/html/assets.c.
 */
#ifndef DOMPROF_PP_HTML_ASSETS_H
#define DOMPROF_PP_HTML_ASSETS_H

#include <stddef.h>

/* Each is followed by a NUL byte that its _len does not count. */
extern const unsigned char html_report_js[], html_report_css[];
extern const size_t html_report_js_len, html_report_css_len;

#endif
