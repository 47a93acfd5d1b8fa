/* Source: netzbasis/openbsd-src@44b1c1ee8edd20e8f91ee5783670d9841a76b69b:sys/netinet/icmp_var.h (OpenBSD 6.6) */

#define	ICMPCTL_MASKREPL	1	/* allow replies to netmask requests */
#define ICMPCTL_BMCASTECHO	2	/* reply to icmps to broadcast/mcast */
#define ICMPCTL_ERRPPSLIMIT	3	/* ICMP error pps limitation */
#define	ICMPCTL_REDIRACCEPT	4	/* Accept redirects from routers */
#define	ICMPCTL_REDIRTIMEOUT	5	/* Remove routes added via redirects */
#define	ICMPCTL_TSTAMPREPL	6	/* allow replies to timestamp requests */
#define ICMPCTL_STATS		7	/* ICMP statistics */
#define ICMPCTL_MAXID		8

#define ICMPCTL_NAMES { \
	{ 0, 0 }, \
	{ "maskrepl", CTLTYPE_INT }, \
	{ "bmcastecho", CTLTYPE_INT }, \
	{ "errppslimit", CTLTYPE_INT }, \
	{ "rediraccept", CTLTYPE_INT }, \
	{ "redirtimeout", CTLTYPE_INT }, \
	{ "tstamprepl", CTLTYPE_INT }, \
	{ "stats", CTLTYPE_STRUCT } \
}
