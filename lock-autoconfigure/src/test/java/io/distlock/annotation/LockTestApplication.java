package io.distlock.annotation;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.jdbc.core.JdbcTemplate;

import io.distlock.LockRegistry;
import io.distlock.annotation.LockedServices.Accounts;
import io.distlock.annotation.LockedServices.Bank;
import io.distlock.annotation.LockedServices.Busy;
import io.distlock.annotation.LockedServices.Counter;
import io.distlock.annotation.LockedServices.Inner;
import io.distlock.annotation.LockedServices.Inventory;
import io.distlock.annotation.LockedServices.KeyForms;
import io.distlock.annotation.LockedServices.KeyParts;
import io.distlock.annotation.LockedServices.Outer;
import io.distlock.annotation.LockedServices.Reports;
import io.distlock.annotation.LockedServices.Restocking;
import io.distlock.annotation.LockedServices.Shipping;
import io.distlock.annotation.LockedServices.ShippingImpl;
import io.distlock.annotation.LockedServices.Teller;

/**
 * A plain Boot application with the starter's auto-configuration and the locked test beans; each
 * test starts one or two of it, as one or two instances of a service.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
class LockTestApplication {

	@Bean
	Counter counter(StringRedisTemplate redis) {
		return new Counter(redis);
	}

	@Bean
	KeyParts keyParts() {
		return new KeyParts();
	}

	@Bean
	KeyForms keyForms() {
		return new KeyForms();
	}

	@Bean
	Inner inner() {
		return new Inner();
	}

	@Bean
	Outer outer(Inner inner) {
		return new Outer(inner);
	}

	@Bean
	Restocking restocking() {
		return new Restocking();
	}

	@Bean
	Bank bank() {
		return new Bank();
	}

	@Bean
	Busy busy() {
		return new Busy();
	}

	@Bean
	LockFailureHandler busyHandler() {
		return failure -> "handled:" + failure.lockNames();
	}

	@Bean
	Shipping shipping() {
		return new ShippingImpl();
	}

	@Bean
	Reports reports() {
		return new Reports();
	}

	@Bean
	Inventory inventory() {
		return new Inventory();
	}

	@Bean
	Accounts accounts(JdbcTemplate jdbc, LockRegistry registry) {
		return new Accounts(jdbc, registry);
	}

	@Bean
	Teller teller(Accounts accounts) {
		return new Teller(accounts);
	}

	@Bean
	LockedServices.Blocking blocking() {
		return new LockedServices.Blocking();
	}

	@Bean
	LockedServices.LockEvents lockEvents() {
		return new LockedServices.LockEvents();
	}

}
