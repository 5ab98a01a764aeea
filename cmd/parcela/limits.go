package main

import (
	"fmt"
	"net/netip"
	"strconv"
	"time"

	"parcela/server"
)

// serveLimits are the limits of `parcela serve` that protect one client or
// tenant from the others, read from the environment.
type serveLimits struct {
	unauthenticatedRate, imageRate float64
	pageRate                       float64 // the payer pages' GETs per client address
	pageOrdersPerHour              int     // the orders a client address creates from the offer pages in an hour; -1: no limit
	trustedProxies                 []netip.Prefix
	imageCacheBytes                int64
	listener                       server.ListenerLimits
}

func readServeLimits(getenv func(string) string) (serveLimits, error) {
	l := serveLimits{listener: server.DefaultListenerLimits(), imageCacheBytes: server.DefaultImageCacheBytes}
	var err error
	if l.unauthenticatedRate, err = envFloat(getenv, "PARCELA_UNAUTHENTICATED_RATE_LIMIT", 10); err != nil {
		return l, err
	}
	if l.imageRate, err = envFloat(getenv, "PARCELA_IMAGE_RATE_LIMIT", 20); err != nil {
		return l, err
	}
	// 20 a second: a payer loads a page every few seconds, and one waiting
	// for a payment checks it every 5 s (0.2 a second), so about a hundred
	// payers behind one carrier NAT address stay under it, while one
	// address is held to 20 database reads and renders a second.
	if l.pageRate, err = envFloat(getenv, "PARCELA_PAGE_RATE_LIMIT", 20); err != nil {
		return l, err
	}
	l.pageOrdersPerHour = 60
	if s := getenv("PARCELA_PAGE_ORDERS_PER_HOUR"); s != "" {
		if l.pageOrdersPerHour, err = strconv.Atoi(s); err != nil || l.pageOrdersPerHour < 0 || l.pageOrdersPerHour > 1000000000 {
			return l, fmt.Errorf("PARCELA_PAGE_ORDERS_PER_HOUR: %q is not a number of orders an hour: 0 (no limit) to 1000000000", s)
		}
		if l.pageOrdersPerHour == 0 {
			l.pageOrdersPerHour = -1 // no limit
		}
	}
	if l.trustedProxies, err = server.ParseTrustedProxies(getenv("PARCELA_TRUSTED_PROXIES")); err != nil {
		return l, fmt.Errorf("PARCELA_TRUSTED_PROXIES: %w", err)
	}
	for name, d := range map[string]*time.Duration{
		"PARCELA_READ_HEADER_TIMEOUT": &l.listener.ReadHeaderTimeout,
		"PARCELA_READ_TIMEOUT":        &l.listener.ReadTimeout,
		"PARCELA_WRITE_TIMEOUT":       &l.listener.WriteTimeout,
		"PARCELA_IDLE_TIMEOUT":        &l.listener.IdleTimeout,
	} {
		if s := getenv(name); s != "" {
			if *d, err = time.ParseDuration(s); err != nil || *d <= 0 {
				return l, fmt.Errorf("%s: %q is not a positive duration", name, s)
			}
			// A request's time is nine tenths of the write timeout: under a
			// second (1ns, 1ms) every request ran out of it, and the server
			// answered nothing but 503s. The read timeouts alike: 1ns closed
			// every connection before its headers were read (nothing
			// answered at all), or cut a form's body short; a client over
			// a phone network takes more than a millisecond to send either.
			if name != "PARCELA_IDLE_TIMEOUT" && *d < time.Second {
				return l, fmt.Errorf("%s: %q is under a second, too short for any request", name, s)
			}
		}
	}
	if s := getenv("PARCELA_MAX_CONNECTIONS"); s != "" {
		if l.listener.MaxConnections, err = strconv.Atoi(s); err != nil || l.listener.MaxConnections < 1 {
			return l, fmt.Errorf("PARCELA_MAX_CONNECTIONS: %q is not a positive number of connections", s)
		}
	}
	// An address's share is a quarter of the connections, of those set.
	l.listener.MaxConnectionsPerAddress = max(1, l.listener.MaxConnections/4)
	if s := getenv("PARCELA_MAX_CONNECTIONS_PER_ADDRESS"); s != "" {
		if l.listener.MaxConnectionsPerAddress, err = strconv.Atoi(s); err != nil || l.listener.MaxConnectionsPerAddress < 0 {
			return l, fmt.Errorf("PARCELA_MAX_CONNECTIONS_PER_ADDRESS: %q is not a number of connections: 0 (no bound) or more", s)
		}
		if l.listener.MaxConnectionsPerAddress > l.listener.MaxConnections {
			return l, fmt.Errorf("PARCELA_MAX_CONNECTIONS_PER_ADDRESS: %d is over PARCELA_MAX_CONNECTIONS (%d), and would bound nothing; 0 says no bound",
				l.listener.MaxConnectionsPerAddress, l.listener.MaxConnections)
		}
	}
	if s := getenv("PARCELA_IMAGE_CACHE_BYTES"); s != "" {
		if l.imageCacheBytes, err = strconv.ParseInt(s, 10, 64); err != nil || l.imageCacheBytes < 0 {
			return l, fmt.Errorf("PARCELA_IMAGE_CACHE_BYTES: %q is not a number of bytes", s)
		}
		if l.imageCacheBytes == 0 {
			l.imageCacheBytes = -1 // no cache
		}
	}
	return l, nil
}
