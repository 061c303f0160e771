# pp/ build fragment, included by the top Makefile.am.
