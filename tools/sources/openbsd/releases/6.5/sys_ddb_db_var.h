/* Source: netzbasis/openbsd-src@e0deaa949402a40060d86289184fa9d67af00880:sys/ddb/db_var.h (OpenBSD 6.5) */

#define DBCTL_RADIX	1
#define DBCTL_MAXWIDTH	2
#define DBCTL_MAXLINE	3
#define DBCTL_TABSTOP	4
#define DBCTL_PANIC	5
#define DBCTL_CONSOLE	6
#define DBCTL_LOG	7
#define DBCTL_TRIGGER	8
#define DBCTL_PROFILE	9
#define DBCTL_MAXID	10

#define	CTL_DDB_NAMES { \
	{ NULL, 0 }, \
	{ "radix", CTLTYPE_INT }, \
	{ "max_width", CTLTYPE_INT }, \
	{ "max_line", CTLTYPE_INT }, \
	{ "tab_stop_width", CTLTYPE_INT },\
	{ "panic", CTLTYPE_INT }, \
	{ "console", CTLTYPE_INT }, \
	{ "log", CTLTYPE_INT }, \
	{ "trigger", CTLTYPE_INT }, \
	{ "profile", CTLTYPE_INT }, \
}
