/* Source: github.com/openbsd/src (stored commit 00007ca37eafa7b89f0bc525e5d9422d2458477f): the sysctl(8)
 * name tables of sys/netinet/tcp_var.h (net.inet.tcp) and sys/net/if.h (net.inet.ip.ifq, net.inet6.ip6.ifq),
 * copied verbatim. A NULL slot is a number with no name: sysctl(8) does not accept a name for it. */
/* sys/netinet/tcp_var.h (the numbers of the slots that have no name) */
#define TCPCTL_SLOWHZ		5 /* return kernel idea of PR_SLOWHZ */
#define	TCPCTL_RECVSPACE	7 /* receive buffer space */
#define	TCPCTL_SENDSPACE	8 /* send buffer space */
#define	TCPCTL_NAMES { \
	{ 0, 0 }, \
	{ "rfc1323",	CTLTYPE_INT }, \
	{ "keepinittime",	CTLTYPE_INT }, \
	{ "keepidle",	CTLTYPE_INT }, \
	{ "keepintvl",	CTLTYPE_INT }, \
	{ NULL,	0 }, \
	{ "baddynamic", CTLTYPE_STRUCT }, \
	{ NULL,	0 }, \
	{ NULL,	0 }, \
	{ "ident", 	CTLTYPE_STRUCT }, \
	{ "sack",	CTLTYPE_INT }, \
	{ "mssdflt",	CTLTYPE_INT }, \
	{ "rstppslimit",	CTLTYPE_INT }, \
	{ "ackonpush",	CTLTYPE_INT }, \
	{ "ecn", 	CTLTYPE_INT }, \
	{ "syncachelimit", 	CTLTYPE_INT }, \
	{ "synbucketlimit", 	CTLTYPE_INT }, \
	{ "rfc3390", 	CTLTYPE_INT }, \
	{ "reasslimit", 	CTLTYPE_INT }, \
	{ "drop", 	CTLTYPE_STRUCT }, \
	{ "sackholelimit", 	CTLTYPE_INT }, \
	{ "stats",	CTLTYPE_STRUCT }, \
	{ "always_keepalive",	CTLTYPE_INT }, \
	{ "synuselimit", 	CTLTYPE_INT }, \
	{ "rootonly", CTLTYPE_STRUCT }, \
	{ "synhashsize", 	CTLTYPE_INT }, \
}
/* sys/net/if.h */
#define CTL_IFQ_NAMES  { \
	{ 0, 0 }, \
	{ "len", CTLTYPE_INT }, \
	{ "maxlen", CTLTYPE_INT }, \
	{ "drops", CTLTYPE_INT }, \
	{ "congestion", CTLTYPE_INT }, \
}
/* sys/sys/sysctl.h rev 1.246 (2025-07-31; a superset of 7.3's and 7.4's: names added since are kept, so a
 * name missing here is missing from every release up to it), CTL_HW_NAMES and CTL_HW_BATTERY_NAMES,
 * verbatim. "gap" slots are numbers no longer used. hw.sensors is filled in at run time by sensor drivers. */
#define	CTL_HW_NAMES { \
	{ 0, 0 }, \
	{ "machine", CTLTYPE_STRING }, \
	{ "model", CTLTYPE_STRING }, \
	{ "ncpu", CTLTYPE_INT }, \
	{ "byteorder", CTLTYPE_INT }, \
	{ "gap", 0 }, \
	{ "gap", 0 }, \
	{ "pagesize", CTLTYPE_INT }, \
	{ "disknames", CTLTYPE_STRING }, \
	{ "diskstats", CTLTYPE_STRUCT }, \
	{ "diskcount", CTLTYPE_INT }, \
	{ "sensors", CTLTYPE_NODE}, \
	{ "cpuspeed", CTLTYPE_INT }, \
	{ "setperf", CTLTYPE_INT }, \
	{ "vendor", CTLTYPE_STRING }, \
	{ "product", CTLTYPE_STRING }, \
	{ "version", CTLTYPE_STRING }, \
	{ "serialno", CTLTYPE_STRING }, \
	{ "uuid", CTLTYPE_STRING }, \
	{ "physmem", CTLTYPE_QUAD }, \
	{ "usermem", CTLTYPE_QUAD }, \
	{ "ncpufound", CTLTYPE_INT }, \
	{ "allowpowerdown", CTLTYPE_INT }, \
	{ "perfpolicy", CTLTYPE_STRING }, \
	{ "smt", CTLTYPE_INT }, \
	{ "ncpuonline", CTLTYPE_INT }, \
	{ "power", CTLTYPE_INT }, \
	{ "battery", CTLTYPE_NODE }, \
	{ "ucomnames", CTLTYPE_STRING }, \
}
#define CTL_HW_BATTERY_NAMES { \
	{ 0, 0 }, \
	{ "chargemode", CTLTYPE_INT }, \
	{ "chargestart", CTLTYPE_INT }, \
	{ "chargestop", CTLTYPE_INT }, \
}
