/**
 * The stack's network ports, each written once: the original stack's back end (the app's own port) and front
 * end (HTTP), HTTPS for a stack with a domain, and SSH. At the bottom with the settings, whose
 * descriptions name them; the renderer writes them into the script's header, where the shell reads
 * them, and the constructs open and forward them.
 */

/** The port the app listens on: the back end (BACKENDURI `http://<host>:3000`, docs/original-stack.md §2.2 and §4). */
export const APP_PORT = 3000;
/** The front end: plain HTTP, redirected to APP_PORT on the host (docs/original-stack.md §2.2). */
export const HTTP_PORT = 80;
/** HTTPS, served for a stack with a domain (Caddy on the single host, the load balancer on the scale-out topology). */
export const HTTPS_PORT = 443;
/** A single host's front, Caddy (userdata/front.sh): its plain-HTTP listener, where the host redirects APP_PORT from
 * outside; not open in the security group. */
export const FRONT_PORT = 3080;
/**
 * The front's listener for HTTP_PORT's requests from outside, apart from FRONT_PORT's: one client address and port
 * connecting to both ports met at one local port, where the kernel's NAT gave the second connection another source
 * port, and Linux 6.1 (Debian 12's; Amazon Linux 2023's unless the fix is backported) can then hand its packets to the
 * socket TCP early demux found before that change, the first's: one request of hundreds hung in the boot test
 * (CHANGELOG, Fixed). Not open in the security group.
 */
export const FRONT_HTTP_PORT = 3081;
/** SSH (docs/original-stack.md §2.2). */
export const SSH_PORT = 22;
