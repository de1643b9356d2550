package io.distlock.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The inventory-decrement service of the seeds: several instances sell from one Redis stock counter,
 * and {@code @DistributedLock} keeps them from overselling.
 */
@SpringBootApplication
public class SampleApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

}
