/* Source: netzbasis/openbsd-src@8030d7a93fa9d4cae20487395c7e1c7126b8a954:sys/netinet/igmp_var.h (OpenBSD 6.0) */

#define IGMPCTL_STATS		1	/* IGMP statistics */
#define IGMPCTL_MAXID		2

#define IGMPCTL_NAMES { \
	{ 0, 0 }, \
	{ "stats",	CTLTYPE_STRUCT } \
}
