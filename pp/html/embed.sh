#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# embed.sh FILE NAME [FILE NAME ...]: a C file defining, per FILE, the array
# NAME of its bytes (as `xxd -i` would) and NAME_len, for pp/html/assets.h.
# A file that holds a closing </script or </style tag is refused: embedded
# in the page it would end its element early.
set -eu
echo '/* Generated from pp/html/ by pp/html/embed.sh: do not edit. */'
echo '#include "pp/html/assets.h"'
while [ $# -ge 2 ]; do
	if grep -qiE '</(script|style)' "$1"; then
		echo "embed.sh: $1 holds a closing </script or </style tag" >&2
		exit 1
	fi
	echo "const unsigned char $2[] = {"
	od -An -v -tx1 "$1" | sed -e 's/^ *//' -e 's/ *$//' -e '/^$/d' \
		-e 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'
	echo "0x00};"
	echo "const size_t ${2}_len = $(($(wc -c <"$1")));"
	shift 2
done
