/* Source: CobaltBSD/src@826fc1384d40b97a37da503eab1ad9216bf0a960:sys/netinet/udp_var.h (OpenBSD 7.4-current (derivative CobaltBSD import)) */

#define	UDPCTL_CHECKSUM		1 /* checksum UDP packets */
#define	UDPCTL_BADDYNAMIC	2 /* return bad dynamic port bitmap */
#define UDPCTL_RECVSPACE	3 /* receive buffer space */
#define UDPCTL_SENDSPACE	4 /* send buffer space */
#define UDPCTL_STATS		5 /* UDP statistics */
#define UDPCTL_ROOTONLY		6 /* root only port bitmap */
#define UDPCTL_MAXID		7

#define UDPCTL_NAMES { \
	{ 0, 0 }, \
	{ "checksum", CTLTYPE_INT }, \
	{ "baddynamic", CTLTYPE_STRUCT }, \
	{ "recvspace",  CTLTYPE_INT }, \
	{ "sendspace",  CTLTYPE_INT }, \
	{ "stats",	CTLTYPE_STRUCT }, \
	{ "rootonly", CTLTYPE_STRUCT }, \
}
