/**
 * The grammars that settings land in on the host, one check per target: a setting that becomes a
 * name elsewhere is checked against each grammar it lands in, reserved words included, so that a
 * value the settings accept cannot fail where the provisioning script writes it. The tests run every
 * rendered artifact through its own tool (`nft -c`, `systemd-analyze verify`, `bash -n`, shellcheck,
 * git, `findmnt --verify`): __tests__/settings/grammars.test.ts.
 */
import { isIPv6 } from "net";

/**
 * Words nftables reads as keywords, which cannot name a table (nft has no quoting for table names):
 * the keywords of nftables 1.0.6 (Debian 12: its parser's token names) and of the 1.1 scanner, and the
 * word forms of its operators. Newer versions scope some of them to a context; older ones, such as
 * the Amazon Linux 2023 package, read every one of them as a keyword anywhere.
 */
export const NFT_KEYWORDS: ReadonlySet<string> = new Set(
  `
  a-rwnd abort accept ackseq add addr ah all and arp asconf asconf-ack auto-merge avgpkt burst bypass bytes
  cfi cgroup cgroupv2 chain chains check checksum chunk class classid code comment comp constant continue
  cookie-ack cookie-echo count counter counters cpi cpu create csumcov ct cum-tsn-ack cwr daddr data day dccp
  define dei delete describe destroy device devices direction dnat doff dport drop dscp dst dup dynamic echo
  ecn ecne egress element elements eol eq erspan error esp ether event exists expectation expiration expires
  export exthdr fanout fastopen fib flags flow flowlabel flowtable flowtables flush forward-tsn frag frag-off
  fully-random fwd gateway gbp gc-interval ge geneve get goto gre gretap group gt handle hbh hdrlength heartbeat
  heartbeat-ack helper helpers hlen hook hooks hoplimit hour htype ibriport ibrname icmp icmpv6 icmpx id iif
  iifgroup iifname iiftype igmp import in inc include index inet ingress init init-ack init-tag initial-tsn insert
  interval ip ip6 ipsec jhash json jump l3proto label last last-entry le left length level limit limits list ll
  log lowest-tsn lshift lsrr lt map maps mark masquerade max-delay maxseg md5sig memory meta meter meters mh
  minute missing mod monitor more-fragments mptcp mrt mss mtu name ne netdev never new-cum-tsn nexthdr
  nexthop nh nop noop not notrack nftrace num num-dup-tsns num-gap-ack-blocks num-inbound-streams
  num-outbound-streams numgen obriport obrname offload offset oif oifgroup oifname oiftype operation opt-type
  option options or original osf out over packets param-problem path pcp performance persistent pkttype plen
  policy port position ppid prefix priority proto-dst proto-src protocol ptr ptype queue queue-threshold quota
  quotas ra random rate redefine redirect reject rename replace reply reqid reserved reserved2 reset return right
  rr rshift rt rt0 rt2 rtclassid rule rules ruleset sack sack-perm sack-permitted sack0 sack1 sack2 sack3 saddr
  sctp second secmark secmarks seed seg-left seq seqno set sets shutdown shutdown-ack shutdown-complete sid
  size skgid skuid snaplen snat socket spi spnum sport srh ssn ssrr state status stream subtype symhash
  synproxy synproxys table tables tag taddr tcp th time timeout timestamp to tos tproxy trace transparent tsecr
  tsn tsval ttl tunnel tunnels type typeof udp udplite undefine until update urgptr used value version vlan vm
  vmap vni vtag vxlan week wildcard window with wscale xml xor xt
`
    .trim()
    .split(/\s+/),
);

/**
 * Tables that a distribution's own nftables configuration or another firewall defines (Debian's
 * /etc/nftables.conf: `inet filter`; iptables-nft: filter, nat, mangle, raw, security; firewalld):
 * the script deletes and re-creates the table it names, so it must be a table of its own.
 */
export const NFT_RESERVED_TABLES: readonly string[] = ["filter", "nat", "mangle", "raw", "security", "firewalld"];

/**
 * An nftables identifier (a table name): a letter first, then letters, digits and `_ . / -`, up to 255
 * characters, and not a keyword nor a reserved table.
 */
export function isNftTableName(name: string): boolean {
  return (
    /^[A-Za-z][A-Za-z0-9_./-]{0,254}$/.test(name) && !NFT_KEYWORDS.has(name) && !NFT_RESERVED_TABLES.includes(name)
  );
}

/**
 * What git strips from the ends of an author's name and e-mail (its `crud()`: control characters,
 * space and . , : ; < > " ' \), besides the `<` and `>` it drops anywhere: a value holding them would
 * reach commits changed, or not at all (a name of nothing but these is refused by git).
 */
// eslint-disable-next-line no-control-regex -- control characters are what git strips
const GIT_CRUD = /[\u0000-\u0020.,:;<>"'\\]/;

/** Whether git keeps `value` as written in an identity (user.name, user.email). */
export function gitKeepsIdent(value: string): boolean {
  return (
    value.length > 0 && !/[<>\n]/.test(value) && !GIT_CRUD.test(value[0]) && !GIT_CRUD.test(value[value.length - 1])
  );
}

/** A DNS host name: labels of letters, digits and `-` (not at either end), 1 to 63 characters each, 253 in all. */
export function isHostName(host: string): boolean {
  return (
    host.length <= 253 && host.split(".").every((label) => /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/.test(label))
  );
}

/** An IPv4 address in dotted decimal, each part 0 to 255 without leading zeros (curl, git and nft read others differently). */
export function isIPv4Address(text: string): boolean {
  return /^((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])$/.test(text);
}

/** An IPv6 address in brackets, as a URL carries it (`[fd00:ec2::254]`). */
export function isBracketedIPv6(text: string): boolean {
  return /^\[[0-9A-Fa-f:.]+\]$/.test(text) && isIPv6(text.slice(1, -1));
}

/** A TCP port, as a URL carries it: 1 to 65535 without leading zeros. */
export function isPort(text: string): boolean {
  return /^[1-9][0-9]{0,4}$/.test(text) && Number(text) <= 65535;
}
