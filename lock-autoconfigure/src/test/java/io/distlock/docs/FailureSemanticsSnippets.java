package io.distlock.docs;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import io.distlock.annotation.LockAcquisitionException;

/**
 * The code of {@code docs/failure-semantics.md}, compiled; see {@link DocsSnippetsTests}.
 */
@SuppressWarnings("unused")
class FailureSemanticsSnippets {

	// tag::exception-handler[]
	@RestControllerAdvice
	class LockErrors {

		@ExceptionHandler(LockAcquisitionException.class)
		ResponseEntity<ProblemDetail> busy(LockAcquisitionException ex) {
			ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.TOO_MANY_REQUESTS, ex.getMessage());
			return ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS).header(HttpHeaders.RETRY_AFTER, "5").body(problem);
		}

	}
	// end::exception-handler[]

}
