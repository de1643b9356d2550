package io.distlock.sample;

import java.util.Map;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.distlock.annotation.LockAcquisitionException;
import io.distlock.LockBackendException;

/**
 * HTTP face of the inventory: set and read the stock, sell one (locked) or sell one unprotected.
 */
@RestController
class InventoryController {

	private final InventoryService inventory;

	InventoryController(InventoryService inventory) {
		this.inventory = inventory;
	}

	@PutMapping("/stock/{item}")
	Map<String, Object> reset(@PathVariable String item, @RequestParam long quantity) {
		this.inventory.reset(item, quantity);
		return Map.of("item", item, "stock", quantity);
	}

	@GetMapping("/stock/{item}")
	Map<String, Object> stock(@PathVariable String item) {
		return Map.of("item", item, "stock", this.inventory.stock(item));
	}

	@PostMapping("/stock/{item}/sell")
	Sale sell(@PathVariable String item) {
		return this.inventory.sellOne(item);
	}

	@PostMapping("/stock/{item}/sell-unprotected")
	Sale sellUnprotected(@PathVariable String item) {
		return this.inventory.sellOneUnprotected(item);
	}

	@ExceptionHandler(LockAcquisitionException.class)
	ResponseEntity<Map<String, Object>> busy(LockAcquisitionException ex) {
		// A Redis that cannot be reached is not a busy lock: say which it was.
		String error = (ex.getCause() instanceof LockBackendException) ? "lock-backend-unavailable" : "lock-timeout";
		return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE)
			.body(Map.of("sold", false, "error", error, "message", ex.getMessage()));
	}

	/** Inside the locked method: the fencing token (issued on request) could not be had from Redis. */
	@ExceptionHandler(LockBackendException.class)
	ResponseEntity<Map<String, Object>> backendUnavailable(LockBackendException ex) {
		return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE)
			.body(Map.of("sold", false, "error", "lock-backend-unavailable", "message", ex.getMessage()));
	}

	@ExceptionHandler(InventoryService.StaleLockException.class)
	ResponseEntity<Map<String, Object>> stale(InventoryService.StaleLockException ex) {
		return ResponseEntity.status(HttpStatus.CONFLICT)
			.body(Map.of("sold", false, "error", "stale-lock", "message", ex.getMessage()));
	}

}
