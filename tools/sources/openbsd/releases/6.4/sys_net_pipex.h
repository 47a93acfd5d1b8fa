/* Source: netzbasis/openbsd-src@dc525184cbba8f0bb3f0a2d572fa2b0f3f1fdfe5:sys/net/pipex.h (OpenBSD 6.4) */

#define PIPEXCTL_ENABLE		1
#define PIPEXCTL_INQ		2
#define PIPEXCTL_OUTQ		3
#define PIPEXCTL_MAXID		4

#define PIPEXCTL_NAMES { \
        { 0, 0 }, \
        { "enable", CTLTYPE_INT }, \
        { "inq", CTLTYPE_NODE }, \
        { "outq", CTLTYPE_NODE }, \
}
