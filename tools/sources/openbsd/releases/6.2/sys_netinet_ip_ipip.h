/* Source: netzbasis/openbsd-src@72ff345029cd271fe7ea8090aff7a89d1d32a7af:sys/netinet/ip_ipip.h (OpenBSD 6.2) */

#define	IPIPCTL_ALLOW	1		/* accept incoming IP4 packets */
#define	IPIPCTL_STATS	2		/* IPIP stats */
#define	IPIPCTL_MAXID	3

#define IPIPCTL_NAMES { \
	{ 0, 0 }, \
	{ "allow", CTLTYPE_INT }, \
	{ "stats", CTLTYPE_STRUCT }, \
}
