/* Source: netzbasis/openbsd-src@8030d7a93fa9d4cae20487395c7e1c7126b8a954:sys/net/pipex.h (OpenBSD 6.0) */

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
